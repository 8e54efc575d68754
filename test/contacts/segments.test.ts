import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/api-keys/service.js';
import { type BroadcastBench, getBroadcast, schedule, startBroadcastServer } from '../helpers/broadcasts.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { seedEmailChannel } from '../helpers/mail.js';
import type { TestServer } from '../helpers/server.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';

describe('segments', () => {
  let bench: BroadcastBench;
  let s: TestServer;
  let sink: SmtpSink;
  let seed: Seed;

  before(async () => {
    bench = await startBroadcastServer();
    ({ s, sink } = bench);
    seed = await seedWorkspace(s.app);
    await seedEmailChannel(s.app, seed, { smtpPort: sink.port });
  });
  after(() => bench.close());

  test('CRUD: a saved contacts filter with a live count; bad filters refused', async () => {
    for (const [name, email, plan] of [
      ['Vera', 'vera@vip.example', 'vip'],
      ['Walt', 'walt@vip.example', 'vip'],
      ['Xena', 'xena@plain.example', 'basic'],
    ]) {
      assert.equal((await s.request('POST', '/v1/contacts', { token: seed.apiKey, body: { name, emails: [email], attributes: { plan } } })).status, 201);
    }
    const created = await s.request('POST', '/v1/segments', { token: seed.apiKey, body: { name: ' VIPs ', filter: { q: 'vip', has_open: false } } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.name, 'VIPs');
    assert.deepEqual(created.body.filter, { q: 'vip', has_open: false });
    assert.equal(created.body.contacts, 2);
    const id = created.body.id;
    assert.match(id, /^seg_/);
    assert.equal((await s.request('POST', '/v1/segments', { token: seed.apiKey, body: { name: 'x', filter: { created_after: 'soon' } } })).status, 400);
    assert.equal((await s.request('POST', '/v1/segments', { token: seed.apiKey, body: { name: 'x', filter: { external_id: 'a' } } })).status, 400);
    assert.equal((await s.request('POST', '/v1/segments', { token: seed.apiKey, body: { name: '', filter: {} } })).status, 400);
    assert.equal((await s.request('POST', '/v1/segments', { token: seed.apiKey, body: { name: 'x', filter: { nope: 1 } } })).status, 400);

    const list = await s.request('GET', '/v1/segments', { token: seed.apiKey });
    assert.deepEqual(
      list.body.data.map((x: { id: string }) => x.id),
      [id],
    );
    const patched = await s.request('PATCH', `/v1/segments/${id}`, { token: seed.apiKey, body: { name: 'Everyone', filter: {} } });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.contacts, 3);
    const other = await seedWorkspace(s.app, { name: 'Other' });
    assert.equal((await s.request('GET', `/v1/segments/${id}`, { token: other.apiKey })).status, 404);
    assert.equal((await s.request('DELETE', `/v1/segments/${id}`, { token: other.apiKey })).status, 404);
    assert.equal((await s.request('DELETE', `/v1/segments/${id}`, { token: seed.apiKey })).status, 200);
    assert.equal((await s.request('GET', `/v1/segments/${id}`, { token: seed.apiKey })).status, 404);
  });

  test('a segment as a broadcast audience: resolved when sending starts, suppressed addresses skipped', async () => {
    const ws = await seedWorkspace(s.app, { name: 'Audience' });
    await seedEmailChannel(s.app, ws, { smtpPort: sink.port });
    for (const [email, tier] of [
      ['a1@gold.example', 'gold'],
      ['a2@gold.example', 'gold'],
      ['a3@gold.example', 'gold'],
      ['b1@tin.example', 'tin'],
    ]) {
      await s.request('POST', '/v1/contacts', { token: ws.apiKey, body: { emails: [email], attributes: { tier } } });
    }
    const seg = (await s.request('POST', '/v1/segments', { token: ws.apiKey, body: { name: 'Gold', filter: { q: 'gold' } } })).body;
    const limited = await createApiKey(s.app, { workspaceId: ws.workspaceId, name: 'l', scopes: ['broadcasts:manage'], inboxIds: [ws.inboxId] });
    const refused = await s.request('POST', '/v1/broadcasts', {
      token: limited.secret,
      body: { inbox_id: ws.inboxId, subject: 'News', text: 'Hi {{unsubscribe_url}}', segment_id: seg.id },
    });
    assert.equal(refused.status, 403);
    assert.equal(
      (await s.request('POST', '/v1/broadcasts', { token: ws.apiKey, body: { inbox_id: ws.inboxId, subject: 'N', text: 'x', segment_id: 'seg_nope' } })).status,
      404,
    );
    const b = await s.request('POST', '/v1/broadcasts', {
      token: ws.apiKey,
      body: { inbox_id: ws.inboxId, subject: 'Gold news', text: 'Hi {{unsubscribe_url}}', segment_id: seg.id },
    });
    assert.equal(b.status, 201, JSON.stringify(b.body));
    assert.equal(b.body.segment_id, seg.id);
    assert.equal(b.body.counts.recipients, 0);
    // A contact that joins the segment after the draft was made is still mailed; one who unsubscribed is not.
    await s.request('POST', '/v1/contacts', { token: ws.apiKey, body: { emails: ['a4@gold.example'], attributes: { tier: 'gold' } } });
    await s.app.db
      .insertInto('broadcast_suppressions')
      .values({ workspace_id: ws.workspaceId, email: 'a2@gold.example', reason: 'unsubscribed', broadcast_id: null, created_at: s.clock.now().toISOString() })
      .execute();
    const del = await s.request('DELETE', `/v1/segments/${seg.id}`, { token: ws.apiKey });
    assert.equal(del.status, 409);
    assert.equal(del.body.error.code, 'segment_in_use');
    const scheduled = await schedule(s, ws.apiKey, b.body.id);
    assert.equal(scheduled.status, 200, JSON.stringify(scheduled.body));
    const before = sink.messages.length;
    await s.app.jobs.drain();
    const done = await getBroadcast(s, ws.apiKey, b.body.id);
    assert.equal(done.status, 'sent', JSON.stringify(done));
    assert.equal(done.counts.recipients, 4);
    assert.equal(done.counts.sent, 3);
    assert.equal(done.counts.suppressed, 1);
    const to = sink.messages
      .slice(before)
      .flatMap((m) => m.to)
      .sort();
    assert.deepEqual(to, ['a1@gold.example', 'a3@gold.example', 'a4@gold.example']);
    // Resolved once: the segment may go now.
    assert.equal((await s.request('DELETE', `/v1/segments/${seg.id}`, { token: ws.apiKey })).status, 200);
  });
});
