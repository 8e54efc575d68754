// GET /v1/contacts?q= on the trigram index (migration 0071): the same contacts as the scan it
// replaces, for substrings at the start, middle and end of every field, in any case, short queries,
// LIKE wildcards and quotes; after edits, merges, deletion, an import and a workspace's deletion.
// Every shape of the query (index candidates read first or in the query, the walk for common text)
// is compared with the scan on the same data.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { memberAccess } from '../../src/auth/access.js';
import { filteredContacts } from '../../src/contacts/list.js';
import { queryText, type TextShape, textShape } from '../../src/contacts/text-query.js';
import { isPostgres } from '../../src/db/dialect.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('contacts search on the trigram index', () => {
  let s: TestServer;
  let seed: Seed;
  const ids: Record<string, string> = {};

  const search = async (q: string, token = seed.apiKey) => {
    const found: string[] = [];
    let cursor: string | undefined;
    do {
      const r = await s.request('GET', `/v1/contacts?limit=2&q=${encodeURIComponent(q)}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      found.push(...(r.body.data as { id: string }[]).map((c) => c.id));
      cursor = r.body.next_cursor ?? undefined;
    } while (cursor);
    return found.sort();
  };
  const named = (...names: string[]) => names.map((n) => ids[n]).sort();
  const create = async (name: string, body: Record<string, unknown> = {}) => {
    const r = await s.request('POST', '/v1/contacts', { token: seed.apiKey, body: { name, ...body } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    ids[name] = r.body.id;
  };
  /** The contacts each shape finds, the scan's first: all must be equal. */
  const everyShape = async (q: string, workspaceId = seed.workspaceId) => {
    const access = memberAccess(workspaceId, seed.ownerId, 'owner', 'test');
    const text = queryText(q);
    const shapes: TextShape[] = ['scan', 'candidates', 'walk', await textShape(s.app.db, workspaceId, text)];
    const answers = [];
    for (const shape of shapes)
      answers.push(
        (await filteredContacts(s.app.db, access, { query: q }, { textShape: shape }).orderBy('contacts.id', 'desc').execute()).map((r) => r.id).sort(),
      );
    for (let i = 1; i < answers.length; i++) assert.deepEqual(answers[i], answers[0], `${JSON.stringify(q)} as ${JSON.stringify(shapes[i])}`);
    return answers[0];
  };
  /** SQLite: each contact's indexed text is what its rows say now, and no other text is left. */
  const indexInStep = async () => {
    if (isPostgres(s.app.db)) return;
    const contacts = await s.app.db.selectFrom('contacts').select(['id', 'name', 'attributes']).execute();
    const emails = await s.app.db.selectFrom('contact_emails').select(['contact_id', 'email']).execute();
    const externals = await s.app.db.selectFrom('contact_external_ids').select(['contact_id', 'external_id']).execute();
    const stored = new Map((await s.app.db.selectFrom('contact_search').select(['contact_id', 'body']).execute()).map((r) => [r.contact_id, r.body]));
    assert.equal(stored.size, contacts.length, 'one text per contact, none of deleted ones');
    for (const c of contacts) {
      const body = stored.get(c.id);
      assert.ok(body !== undefined, c.id);
      const lines = body.split('\n');
      assert.equal(lines[0], c.name ?? '');
      assert.ok(body.includes(c.attributes));
      for (const e of emails.filter((e) => e.contact_id === c.id)) assert.ok(lines.includes(e.email), `${c.id} ${e.email}`);
      for (const x of externals.filter((x) => x.contact_id === c.id)) assert.ok(lines.includes(x.external_id), `${c.id} ${x.external_id}`);
      for (const e of emails.filter((e) => e.contact_id !== c.id)) assert.ok(!lines.includes(e.email), `${c.id} has ${e.email}`);
    }
    // The FTS5 index against its content table (throws when they differ).
    await sql`insert into contact_search_fts(contact_search_fts, rank) values ('integrity-check', 1)`.execute(s.app.db);
  };

  before(async () => {
    s = await startTestServer();
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    await create('Ada Lovelace', { emails: ['ada@engines.example', 'countess@lovelace.example'], attributes: { plan: 'Enterprise', seats: 40 } });
    await create('Bob Stone', { external_ids: [{ inbox_id: seed.inboxId, external_id: 'CRM-7781' }] });
    await create('Cem Yılmaz', { emails: ['cem@example.net'] });
    await create("Dan O'Brien", { attributes: { note: '50% off_now "gold" tier' } });
    await create('Eve 100%_Sure', { emails: ['eve@sure.example'] });
    await create('Zed', {});
    await create('Ülkü Ünal', { emails: ['ulku@örnek.example'] });
  });
  after(() => s.stop());

  test('substrings at the start, middle and end of every field, in any case', async () => {
    const cases: [string, string[]][] = [
      ['ada', ['Ada Lovelace']],
      ['LOVELACE', ['Ada Lovelace']],
      ['velac', ['Ada Lovelace']],
      ['ace', ['Ada Lovelace']],
      ['ines.exam', ['Ada Lovelace']],
      ['countess@', ['Ada Lovelace']],
      ['enterprise', ['Ada Lovelace']],
      ['"seats":40', ['Ada Lovelace']],
      ['crm-7781', ['Bob Stone']],
      ['7781', ['Bob Stone']],
      ['Yılmaz', ['Cem Yılmaz']],
      ['ılm', ['Cem Yılmaz']],
      ['example', ['Ada Lovelace', 'Cem Yılmaz', 'Eve 100%_Sure', 'Ülkü Ünal']],
      ['  stone  ', ['Bob Stone']],
      ['absent-word', []],
      // A field boundary is no match: the end of the name and the start of the attributes.
      ['stone\n{', []],
      ['lovelace{', []],
    ];
    for (const [q, names] of cases) {
      assert.deepEqual(await search(q), named(...names), q);
      assert.deepEqual(await everyShape(q), named(...names), q);
    }
    // Letters outside ASCII in another case: each dialect's lower() and LIKE decide, as before.
    for (const q of ['örnek', 'ülkü', 'ÜLKÜ', 'Ünal', 'YILMAZ']) assert.deepEqual(await search(q), await everyShape(q), q);
  });

  test('short queries, wildcards and quotes mean what they meant before', async () => {
    const all = Object.keys(ids);
    const cases: [string, string[]][] = [
      ['ze', ['Zed']],
      ['z', ['Zed', 'Cem Yılmaz']],
      ['é', []],
      // % and _ are dropped: "100%_sure" looks for "100sure".
      ['100%_sure', []],
      ['%_sure', ['Eve 100%_Sure']],
      ['_', all],
      ["o'brien", ["Dan O'Brien"]],
      ["'", ["Dan O'Brien"]],
      ['"note":"50', ["Dan O'Brien"]],
      ['\\"gold\\"', []],
      ['50 off', []],
      ['off_now', []],
      ['offnow', []],
      ['% off', ["Dan O'Brien"]],
      ["brien'", []],
      ['\\', all],
    ];
    for (const [q, names] of cases) {
      assert.deepEqual(await search(q), named(...names), q);
      assert.deepEqual(await everyShape(q), named(...names), q);
    }
  });

  test('edits, merges, deletion and an import change what is found', async () => {
    const patch = async (name: string, body: Record<string, unknown>) => {
      const r = await s.request('PATCH', `/v1/contacts/${ids[name]}`, { token: seed.apiKey, body });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    };
    await patch('Zed', { name: 'Zedekiah Quill', emails: ['quill@feathers.example'], external_ids: [{ inbox_id: seed.inboxId, external_id: 'QX-1' }] });
    ids['Zedekiah Quill'] = ids.Zed;
    assert.deepEqual(await search('zedekiah'), named('Zed'));
    assert.deepEqual(await search('feathers'), named('Zed'));
    assert.deepEqual(await search('qx-1'), named('Zed'));
    await patch('Zed', { emails: [], external_ids: [], attributes: { tier: 'platinum' } });
    assert.deepEqual(await search('feathers'), []);
    assert.deepEqual(await search('qx-1'), []);
    assert.deepEqual(await search('platinum'), named('Zed'));
    await indexInStep();

    // Merge: Bob's external id moves to Ada; Bob (merged) is no longer listed.
    const merged = await s.request('POST', `/v1/contacts/${ids['Bob Stone']}/merge`, { token: seed.apiKey, body: { into_contact_id: ids['Ada Lovelace'] } });
    assert.equal(merged.status, 200, JSON.stringify(merged.body));
    assert.deepEqual(await search('crm-7781'), named('Ada Lovelace'));
    assert.deepEqual(await everyShape('crm-7781'), named('Ada Lovelace'));
    assert.deepEqual(await search('stone'), []);
    await indexInStep();

    const removed = await s.request('DELETE', `/v1/contacts/${ids['Cem Yılmaz']}`, { token: seed.apiKey });
    assert.equal(removed.status, 200, JSON.stringify(removed.body));
    assert.deepEqual(await search('yılmaz'), []);
    assert.deepEqual(await search('cem@example.net'), []);
    await indexInStep();

    const csv = ['Name,E-mail,Plan', 'Grace Hopper,grace@navy.example,cobol', 'Ada L.,ADA@engines.example,analytical'].join('\r\n');
    const up = await s.request('POST', '/v1/contacts/import?filename=c.csv', { token: seed.apiKey, raw: csv, headers: { 'content-type': 'text/csv' } });
    assert.equal(up.status, 201, JSON.stringify(up.body));
    const mapping = [{ to: 'name' }, { to: 'email' }, { to: 'attribute', key: 'plan' }];
    assert.equal((await s.request('POST', `/v1/contact-imports/${up.body.id}/start`, { token: seed.apiKey, body: { mapping } })).status, 200);
    await s.app.jobs.drain();
    const grace = await search('hopper');
    assert.equal(grace.length, 1);
    assert.deepEqual(await search('navy.exa'), grace);
    assert.deepEqual(await search('analytical'), named('Ada Lovelace'), 'the import updated Ada');
    assert.deepEqual(await search('ada l.'), named('Ada Lovelace'));
    await indexInStep();
  });

  test('a common text (the walk) and a rare one (the candidates) find the same as the scan', async () => {
    const other = await seedWorkspace(s.app, { name: 'Many' });
    const rows = Array.from({ length: 1100 }, (_, i) => ({
      id: `ct_many${String(i).padStart(5, '0')}`,
      workspace_id: other.workspaceId,
      name: i % 97 === 0 ? `Rare Zebra ${i}` : `Customer ${i}`,
      attributes: JSON.stringify({ n: i }),
      merged_into_id: null,
      created_at: new Date(Date.UTC(2026, 0, 1) + i).toISOString(),
      updated_at: new Date(Date.UTC(2026, 0, 1) + i).toISOString(),
    }));
    await s.app.db.insertInto('contacts').values(rows).execute();
    await s.app.db
      .insertInto('contact_emails')
      .values(
        rows.map((r, i) => ({ workspace_id: other.workspaceId, email: `c${i}@shop${i % 3}.example`, contact_id: r.id, position: 0, created_at: r.created_at })),
      )
      .execute();
    assert.equal(await textShape(s.app.db, other.workspaceId, 'customer'), 'walk');
    assert.equal(((await textShape(s.app.db, other.workspaceId, 'shop1.example')) as { ids: string[] }).ids.length, 367);
    assert.notEqual(await textShape(s.app.db, other.workspaceId, 'zebra'), 'walk');
    assert.equal((await everyShape('customer', other.workspaceId)).length, 1100 - 12);
    assert.equal((await everyShape('zebra', other.workspaceId)).length, 12);
    assert.equal((await everyShape('shop1.exam', other.workspaceId)).length, 367);
    assert.equal((await everyShape('c1099@', other.workspaceId)).length, 1);
    // Under 3 characters: no trigram, the same two shapes read without the index.
    assert.equal(await textShape(s.app.db, other.workspaceId, 'er'), isPostgres(s.app.db) ? 'scan' : 'walk');
    assert.equal((await everyShape('er', other.workspaceId)).length, 1100 - 12);
    assert.equal((await everyShape('ZE', other.workspaceId)).length, 12);
    // The other workspace's contacts never show: Ada's search there finds nothing.
    assert.deepEqual(await everyShape('lovelace', other.workspaceId), []);
    const page = await s.request('GET', '/v1/contacts?limit=5&q=customer', { token: other.apiKey });
    assert.deepEqual(
      page.body.data.map((c: { name: string }) => c.name),
      ['Customer 1099', 'Customer 1098', 'Customer 1097', 'Customer 1096', 'Customer 1095'],
    );
    await indexInStep();

    // A deleted workspace's contacts leave the index with them.
    const gone = await s.request('DELETE', '/v1/workspace', { token: other.ownerToken, body: { name: 'Many' } });
    assert.equal(gone.status, 202, JSON.stringify(gone.body));
    await s.app.jobs.drain();
    assert.equal((await s.app.db.selectFrom('contacts').select('id').where('workspace_id', '=', other.workspaceId).execute()).length, 0);
    await indexInStep();
  });
});
