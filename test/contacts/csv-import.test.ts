import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/api-keys/service.js';
import { IMPORT_BATCH, runImport } from '../../src/contacts/imports.js';
import { createInbox } from '../../src/inboxes/service.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

type Mapping = { to: string; inbox_id?: string; key?: string }[];

describe('contacts CSV import', () => {
  let s: TestServer;
  let seed: Seed;
  let inboxB: string;

  before(async () => {
    s = await startTestServer();
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    inboxB = (await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Shop' })).id;
  });
  after(() => s.stop());

  const upload = (raw: string | Buffer, token = seed.apiKey) =>
    s.request('POST', '/v1/contacts/import?filename=contacts.csv', { token, raw, headers: { 'content-type': 'text/csv' } });
  const start = (id: string, mapping: Mapping, token = seed.apiKey) => s.request('POST', `/v1/contact-imports/${id}/start`, { token, body: { mapping } });
  const progress = async (id: string) => (await s.request('GET', `/v1/contact-imports/${id}`, { token: seed.apiKey })).body;
  const contactsByEmail = async (email: string) =>
    (await s.request('GET', `/v1/contacts?email=${encodeURIComponent(email)}`, { token: seed.apiKey })).body.data as {
      id: string;
      name: string | null;
      emails: string[];
      external_ids: { inbox_id: string; external_id: string }[];
      attributes: Record<string, unknown>;
    }[];

  test('upload previews the file; the mapping imports it: quotes and line breaks in cells, formulas, duplicates, ragged and bad rows', async () => {
    const existing = await s.request('POST', '/v1/contacts', {
      token: seed.apiKey,
      body: { name: 'Old Name', emails: ['ada@example.com'], attributes: { plan: 'free', since: '2020' } },
    });
    assert.equal(existing.status, 201);
    const csv = [
      'Name;E-mail;Customer id;Plan;Note;Skip me',
      'Ada Lovelace;ADA@example.com;c-1;pro;"said ""hi""; then left\nsecond line";x',
      'Alan Turing;alan@example.com, alan@work.example;c-2;"=HYPERLINK(""http://evil"")";-5;x',
      'Alan Turing;alan@example.com;c-2;"=HYPERLINK(""http://evil"")";-5;x',
      'Grace;not-an-address;c-3;free;;x',
      'Nobody;;;free;;',
      'Linus;linus@example.com;c-4;free;;x;surplus',
      'Ken;ada@example.com;c-2;free;;x',
      "Escaped;esc@example.com;c-5;'=1+2;'@me;x",
      'Short;short@example.com',
      ';;;;;',
    ].join('\r\n');
    const up = await upload(`\ufeff${csv}`);
    assert.equal(up.status, 201, JSON.stringify(up.body));
    assert.equal(up.body.state, 'uploaded');
    assert.equal(up.body.encoding, 'utf-8-bom');
    assert.equal(up.body.delimiter, ';');
    assert.deepEqual(up.body.columns, ['Name', 'E-mail', 'Customer id', 'Plan', 'Note', 'Skip me']);
    assert.equal(up.body.rows_total, 10);
    assert.equal(up.body.sample[0][4], 'said "hi"; then left\nsecond line');
    assert.deepEqual(
      up.body.suggested_mapping.map((m: { to: string }) => m.to),
      ['name', 'email', 'attribute', 'attribute', 'attribute', 'attribute'],
    );
    // The preview is read back from the stored file while the import waits for its mapping.
    const again = await progress(up.body.id);
    assert.deepEqual(again.sample, up.body.sample);

    const mapping: Mapping = [
      { to: 'name' },
      { to: 'email' },
      { to: 'external_id', inbox_id: inboxB },
      { to: 'attribute', key: 'plan' },
      { to: 'attribute', key: 'note' },
      { to: 'ignore' },
    ];
    const started = await start(up.body.id, mapping);
    assert.equal(started.status, 200, JSON.stringify(started.body));
    assert.equal(started.body.state, 'queued');
    assert.equal((await start(up.body.id, mapping)).status, 409);
    await s.app.jobs.drain();

    const done = await progress(up.body.id);
    assert.equal(done.state, 'done');
    assert.equal(done.rows_done, 10);
    assert.equal(done.percent, 100);
    assert.equal(done.created, 3, JSON.stringify(done)); // Alan, Escaped and Short; Ada is updated
    assert.equal(done.updated, 1);
    assert.equal(done.unchanged, 1); // the repeated Alan row
    assert.deepEqual(done.errors, [
      { row: 5, reason: 'not an e-mail address: "not-an-address"' },
      { row: 6, reason: 'the row has no e-mail address or external id to find or create the contact by' },
      { row: 7, reason: 'the row has 7 cells; the header names 6 columns' },
      {
        row: 8,
        reason: done.errors[3]?.reason,
      },
      { row: 11, reason: 'the row is empty' },
    ]);
    assert.match(
      done.errors[3].reason,
      /^the row matches 2 different contacts \(ct_\w+ by address ada@example\.com, ct_\w+ by external id "c-2"\); merge them first or fix the row$/,
    );
    assert.equal(done.error_count, 5);
    assert.equal(done.created + done.updated + done.unchanged + done.error_count, done.rows_total);

    const [ada] = await contactsByEmail('ada@example.com');
    assert.equal(ada.id, existing.body.id, 'the address found the existing contact');
    assert.equal(ada.name, 'Ada Lovelace');
    assert.deepEqual(ada.attributes, { plan: 'pro', since: '2020', note: 'said "hi"; then left\nsecond line' });
    assert.deepEqual(ada.external_ids, [{ inbox_id: inboxB, external_id: 'c-1' }]);
    const alan = await contactsByEmail('alan@work.example');
    assert.equal(alan.length, 1);
    assert.deepEqual(alan[0].emails, ['alan@example.com', 'alan@work.example']);
    assert.equal(alan[0].attributes.plan, '=HYPERLINK("http://evil")', 'a formula is data: stored as written');
    assert.equal(alan[0].attributes.note, '-5');
    const [esc] = await contactsByEmail('esc@example.com');
    assert.deepEqual(esc.attributes, { plan: '=1+2', note: '@me' }, "an exported formula's apostrophe is taken off");
    const [short] = await contactsByEmail('short@example.com');
    assert.deepEqual(short.attributes, {});
    assert.equal(ada.name, 'Ada Lovelace', 'a failed row writes nothing (the Ken row matched Ada too)');
    assert.equal((await contactsByEmail('linus@example.com')).length, 0);
    // Never a duplicate: one contact per address.
    const all = (await s.request('GET', '/v1/contacts?limit=200', { token: seed.apiKey })).body.data as { emails: string[] }[];
    const emails = all.flatMap((c) => c.emails);
    assert.equal(new Set(emails).size, emails.length);
  });

  test('hostile files: empty, header only, binary, not UTF-8, malformed, too large: clear 4xx and nothing stored', async () => {
    const before = await s.app.db.selectFrom('contact_imports').select('id').execute();
    const refused = async (raw: string | Buffer, reason: string) => {
      const r = await upload(raw);
      assert.equal(r.status, 400, `${reason}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error.code, 'invalid_request');
      assert.equal(r.body.error.reason, reason, JSON.stringify(r.body));
      return r.body.error.message as string;
    };
    assert.match(await refused('', 'empty'), /empty/);
    assert.match(await refused('\r\n\r\n  \r\n', 'empty'), /empty/);
    assert.match(await refused('name,email\r\n', 'empty'), /no rows/);
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63640000000600', 'hex');
    await refused(png, 'binary');
    await refused(Buffer.from([0x4d, 0x5a, 0x90, 0x00, 0x03, 0x00, 0x00, 0x00]), 'binary');
    // Latin-1 "José" is not UTF-8.
    const latin1 = Buffer.concat([Buffer.from('name,email\r\nJos'), Buffer.from([0xe9]), Buffer.from(',jose@example.com\r\n')]);
    assert.match(await refused(latin1, 'encoding'), /not UTF-8 text \(byte 16 is not valid UTF-8\); save it as "CSV UTF-8"/);
    await refused('name,email\r\n"Ada,ada@example.com\r\n', 'malformed');
    await refused(`${Array.from({ length: 201 }, (_, i) => `c${i}`).join(',')}\r\nx\r\n`, 'too_many_columns');
    const big = Buffer.alloc(10 * 1024 * 1024 + 1, 'a');
    const tooBig = await upload(big);
    assert.equal(tooBig.status, 413);
    assert.equal(tooBig.body.error.code, 'too_large');
    // Streamed without a length: the limit holds as the body arrives.
    const chunked = await fetch(`${s.url}/v1/contacts/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${seed.apiKey}`, 'content-type': 'text/csv' },
      body: new ReadableStream({
        start(c) {
          for (let i = 0; i < 11; i++) c.enqueue(new Uint8Array(1024 * 1024).fill(0x61));
          c.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    assert.equal(chunked.status, 413);
    const after = await s.app.db.selectFrom('contact_imports').select('id').execute();
    assert.equal(after.length, before.length, 'refused files leave no import behind');
  });

  test('UTF-16 with a byte-order mark and tab separators are read; the mapping is checked', async () => {
    const text = 'name\temail\r\nZoë\tzoe@example.com\r\n';
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const up = await upload(le);
    assert.equal(up.status, 201, JSON.stringify(up.body));
    assert.equal(up.body.encoding, 'utf-16le');
    assert.equal(up.body.delimiter, '\t');
    assert.deepEqual(up.body.sample, [['Zoë', 'zoe@example.com']]);
    const id = up.body.id;
    assert.equal((await start(id, [{ to: 'name' }])).status, 400, 'one entry per column');
    const noKey = await start(id, [{ to: 'name' }, { to: 'attribute', key: 'x' }]);
    assert.equal(noKey.status, 400);
    assert.match(noKey.body.error.message, /e-mail or to an external id/);
    assert.equal((await start(id, [{ to: 'name' }, { to: 'external_id', inbox_id: 'inb_nope' }])).status, 404);
    assert.equal((await start(id, [{ to: 'name' }, { to: 'bogus' }])).status, 400);
    assert.equal((await start(id, [{ to: 'ignore' }, { to: 'email' }])).status, 200);
    await s.app.jobs.drain();
    const [zoe] = await contactsByEmail('zoe@example.com');
    assert.equal(zoe.name, null, 'an ignored column is not read');

    const be = Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]);
    const upBe = await upload(be);
    assert.equal(upBe.status, 201);
    assert.equal(upBe.body.encoding, 'utf-16be');
    assert.deepEqual(upBe.body.sample, [['Zoë', 'zoe@example.com']]);
  });

  test('an inbox-limited key may not import; another workspace cannot read the import', async () => {
    const limited = await createApiKey(s.app, {
      workspaceId: seed.workspaceId,
      name: 'limited',
      scopes: ['contacts:write', 'contacts:read'],
      inboxIds: [inboxB],
    });
    const r = await upload('name,email\r\nA,a@example.com\r\n', limited.secret);
    assert.equal(r.status, 403);
    const up = await upload('name,email\r\nA,a@example.com\r\n');
    const other = await seedWorkspace(s.app, { name: 'Other' });
    assert.equal((await s.request('GET', `/v1/contact-imports/${up.body.id}`, { token: other.apiKey })).status, 404);
    assert.equal((await start(up.body.id, [{ to: 'name' }, { to: 'email' }], other.apiKey)).status, 404);
  });

  test('an interrupted import resumes from its last committed batch: nothing applied twice', async () => {
    const rows = ['email,name,visits'];
    const n = IMPORT_BATCH * 2 + 50;
    for (let i = 0; i < n; i++) rows.push(`bulk${i % (n - 10)}@example.com,Bulk ${i},${i}`);
    const up = await upload(rows.join('\n'));
    assert.equal(up.status, 201, JSON.stringify(up.body));
    assert.equal(up.body.rows_total, n);
    const id = up.body.id;
    await start(id, [{ to: 'email' }, { to: 'name' }, { to: 'attribute', key: 'visits' }]);
    // One batch commits, then the process "dies" (the run stops where a kill would leave it).
    await runImport(s.app, id, { maxBatches: 1 });
    const half = await progress(id);
    assert.equal(half.state, 'running');
    assert.equal(half.rows_done, IMPORT_BATCH);
    assert.equal(half.created, IMPORT_BATCH);
    // Two runs at once (a lease ran out while the first was still working): each batch's progress
    // only moves on from the value it started at, so the loser's batch is rolled back whole.
    const runs = await Promise.allSettled([runImport(s.app, id), runImport(s.app, id)]);
    assert.ok(runs.some((r) => r.status === 'fulfilled'));
    const countBulk = async () =>
      Number(
        (
          await s.app.db
            .selectFrom('contact_emails')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('workspace_id', '=', seed.workspaceId)
            .where('email', 'like', 'bulk%')
            .executeTakeFirstOrThrow()
        ).n,
      );
    // The job (as after a restart) finds nothing left to do.
    await s.app.jobs.drain();
    const done = await progress(id);
    assert.equal(done.state, 'done');
    assert.equal(done.rows_done, n);
    assert.equal(await countBulk(), n - 10, 'one contact per address');
    assert.equal(done.created + done.updated + done.unchanged, n);
    const [last] = await contactsByEmail('bulk5@example.com');
    assert.equal(last.name, `Bulk ${n - 10 + 5}`, 'the later row of the same address updated the contact');
    // Running again after the end does nothing.
    await runImport(s.app, id);
    assert.equal(await countBulk(), n - 10);
    const stored = await s.app.db.selectFrom('contact_imports').select(['file_key']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(stored.file_key, null, 'the file is removed when the import ends');
  });
});
