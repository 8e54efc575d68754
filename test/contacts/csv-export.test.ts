import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { createInbox } from '../../src/inboxes/service.js';
import { csvText } from '../../src/platform/csv.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('CSV exports', () => {
  let s: TestServer;
  let seed: Seed;
  let inboxB: string;

  before(async () => {
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    inboxB = (await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Shop' })).id;
  });
  after(() => s.stop());

  const csv = async (path: string) => {
    const r = await fetch(`${s.url}${path}`, { headers: { authorization: `Bearer ${seed.apiKey}` } });
    const text = await r.text();
    return { status: r.status, text, headers: r.headers };
  };

  test('contacts: RFC 4180 with formula cells escaped, filters applied; export → import → the same contacts', async () => {
    const people = [
      { name: '=HYPERLINK("http://evil","x")', emails: ['f1@example.com'], attributes: { plan: '+1 555', note: 'line one\nline "two", end' } },
      { name: 'Dash', emails: ['f2@example.com', 'f2b@example.com'], external_ids: [{ inbox_id: inboxB, external_id: '-42' }], attributes: { plan: '@pro' } },
      { name: 'Third', emails: ['f3@example.com'], external_ids: [{ inbox_id: inboxB, external_id: 'c-3' }], attributes: { plan: '-minus' } },
      { name: null, emails: ['f4@example.com'], attributes: { plan: 'free', note: 'Ünïcödé ✓' } },
    ];
    for (const p of people) assert.equal((await s.request('POST', '/v1/contacts', { token: seed.apiKey, body: p })).status, 201);

    const all = await csv('/v1/contacts/export.csv');
    assert.equal(all.status, 200);
    assert.match(all.headers.get('content-type')!, /^text\/csv; charset=utf-8/);
    assert.match(all.headers.get('content-disposition')!, /^attachment; filename="contacts-\d{4}-\d{2}-\d{2}\.csv"/);
    assert.ok(all.text.endsWith('\r\n'));
    assert.ok(all.text.includes(`"'=HYPERLINK(""http://evil"",""x"")"`), 'formula escaped and quoted per RFC 4180');
    assert.ok(all.text.includes(',"line one\nline ""two"", end",'), 'line breaks and quotes in a quoted cell');
    const rows = parse(all.text) as string[][];
    assert.deepEqual(rows[0], ['id', 'name', 'emails', `external_id:${inboxB}`, 'attr:plan', 'attr:note', 'created_at']);
    const byEmail = new Map(rows.slice(1).map((r) => [r[2], r]));
    assert.equal(byEmail.get('f1@example.com')![4], "'+1 555");
    assert.equal(byEmail.get('f2@example.com; f2b@example.com')![3], "'-42");
    assert.equal(byEmail.get('f2@example.com; f2b@example.com')![4], "'@pro");
    assert.equal(byEmail.get('f3@example.com')![4], "'-minus");
    // Tab and CR at the start are escaped too; numbers stay numbers.
    assert.deepEqual(parse(csvText([['\tx', '\rx', -5, '-5', 'a=b']])), [["'\tx", "'\rx", '-5', "'-5", 'a=b']]);
    assert.equal(byEmail.get('f4@example.com')![5], 'Ünïcödé ✓');

    const filtered = parse((await csv('/v1/contacts/export.csv?q=dash')).text) as string[][];
    assert.equal(filtered.length, 2);
    assert.equal(filtered[1][1], 'Dash');
    assert.equal((await csv('/v1/contacts/export.csv?created_after=yesterday')).status, 400);

    // Round trip: delete them, import the export with the suggested mapping, export again.
    const ids = rows.slice(1).map((r) => r[0]);
    for (const id of ids) assert.equal((await s.request('DELETE', `/v1/contacts/${id}`, { token: seed.apiKey })).status, 200);
    const up = await s.request('POST', '/v1/contacts/import', { token: seed.apiKey, raw: all.text, headers: { 'content-type': 'text/csv' } });
    assert.equal(up.status, 201, JSON.stringify(up.body));
    assert.deepEqual(up.body.suggested_mapping, [
      { to: 'ignore' },
      { to: 'name' },
      { to: 'email' },
      { to: 'external_id', inbox_id: inboxB },
      { to: 'attribute', key: 'plan' },
      { to: 'attribute', key: 'note' },
      { to: 'ignore' },
    ]);
    assert.equal(
      (await s.request('POST', `/v1/contact-imports/${up.body.id}/start`, { token: seed.apiKey, body: { mapping: up.body.suggested_mapping } })).status,
      200,
    );
    await s.app.jobs.drain();
    const result = (await s.request('GET', `/v1/contact-imports/${up.body.id}`, { token: seed.apiKey })).body;
    assert.equal(result.created, 4, JSON.stringify(result));
    assert.deepEqual(result.errors, []);
    const again = parse((await csv('/v1/contacts/export.csv')).text) as string[][];
    const data = (r: string[][]) =>
      r
        .slice(1)
        .map((x) => x.slice(1, -1).join('|'))
        .sort();
    assert.deepEqual(data(again), data(rows));
    const listed = (await s.request('GET', '/v1/contacts?email=f1%40example.com', { token: seed.apiKey })).body.data[0];
    assert.equal(listed.name, people[0].name);
    assert.deepEqual(listed.attributes, people[0].attributes);
  });

  test('a conversation list as CSV: the list’s filters, every page, escaped subjects', async () => {
    const address = (await seedEmailChannel(s.app, seed)).address!;
    await deliverMail(s, address, { Subject: '=SUM(A1:A2)', From: 'Eve <eve@example.org>' });
    await deliverMail(s, address, { Subject: 'Plain question', From: 'Bob <bob@example.org>' });
    const r = await csv('/v1/conversations/export.csv?status=open&sort=activity');
    assert.equal(r.status, 200, r.text);
    assert.match(r.headers.get('content-disposition')!, /filename="conversations-/);
    const rows = parse(r.text) as string[][];
    assert.equal(
      rows[0].join(','),
      'id,subject,status,priority,inbox_id,contact_id,contact_name,contact_email,assignee_id,team_id,labels,source,spam,created_at,last_message_at',
    );
    assert.equal(rows.length, 3);
    assert.deepEqual(
      rows
        .slice(1)
        .map((x) => x[1])
        .sort(),
      ["'=SUM(A1:A2)", 'Plain question'],
    );
    assert.equal(rows.find((x) => x[1] === 'Plain question')![7], 'bob@example.org');
    const closed = parse((await csv('/v1/conversations/export.csv?status=closed')).text) as string[][];
    assert.equal(closed.length, 1, 'header only');
    assert.equal((await csv('/v1/conversations/export.csv?status=bogus')).status, 400);
  });

  test('report tables as CSV: per day with a total row, and usage per month', async () => {
    const r = await csv('/v1/reports/export.csv?from=2026-01-01&to=2026-01-03');
    assert.equal(r.status, 200, r.text);
    const rows = parse(r.text) as string[][];
    assert.equal(rows[0][0], 'day');
    assert.deepEqual(
      rows.slice(1).map((x) => x[0]),
      ['2026-01-01', '2026-01-02', '2026-01-03', 'total'],
    );
    assert.equal((await csv('/v1/reports/export.csv?from=nonsense')).status, 400);
    const usage = parse((await csv('/v1/usage/export.csv?from=2026-01&to=2026-03')).text) as string[][];
    assert.deepEqual(usage[0], ['month', 'conversations_billed', 'conversations_imported', 'messages_billed', 'messages_imported', 'storage_bytes_added']);
    assert.equal(usage.length, 4);
  });
});
