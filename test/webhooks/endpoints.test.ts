// Webhook endpoint routes: create (secret once), list, read, update, delete, enable, rotate; who may.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/api-keys/service.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/events/service.js';
import { createInbox } from '../../src/inboxes/service.js';
import { ManualClock } from '../../src/platform/clock.js';
import { emitMessage } from '../helpers/events.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Receiver, startReceiver, verifyDelivery } from '../helpers/webhooks.js';

describe('webhook endpoints API', () => {
  let s: TestServer;
  let seed: Seed;
  let rx: Receiver;

  before(async () => {
    s = await startTestServer({ clock: new ManualClock(), env: { SVC_WEBHOOK_ALLOW_PRIVATE: 'true' } });
    seed = await seedWorkspace(s.app);
    rx = await startReceiver();
  });
  after(async () => {
    await rx.close();
    await s.stop();
  });

  test('create returns the whsec_ secret once; defaults; read, list and update never show it', async () => {
    const created = await s.request('POST', '/v1/webhooks', { token: seed.apiKey, body: { url: `${rx.url}/a` } });
    assert.equal(created.status, 201);
    const secret = created.body.secret as string;
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.match(created.body.id, /^wh_[0-9a-z]{26}$/);
    assert.deepEqual(created.body.events, [...WEBHOOK_EVENT_TYPES]);
    assert.equal(created.body.include_notes, false);
    assert.equal(created.body.inbox_id, null);
    assert.equal(created.body.enabled, true);
    assert.equal(created.body.disabled_reason, null);

    const read = await s.request('GET', `/v1/webhooks/${created.body.id}`, { token: seed.apiKey });
    assert.equal(read.status, 200);
    assert.equal(read.body.secret, undefined);
    const patched = await s.request('PATCH', `/v1/webhooks/${created.body.id}`, {
      token: seed.apiKey,
      body: { events: ['conversation.created', 'message.created'], include_notes: true, inbox_id: seed.inboxId },
    });
    assert.equal(patched.status, 200);
    assert.deepEqual(patched.body.events, ['conversation.created', 'message.created']);
    assert.equal(patched.body.include_notes, true);
    assert.equal(patched.body.inbox_id, seed.inboxId);
    assert.equal(patched.body.secret, undefined);
    const list = await s.request('GET', '/v1/webhooks', { token: seed.ownerToken });
    assert.equal(list.status, 200);
    assert.ok(list.body.data.some((e: any) => e.id === created.body.id));
    assert.ok(list.body.data.every((e: any) => e.secret === undefined));
    assert.equal(list.body.next_cursor, null);

    // The secret is stored sealed, and never reaches logs or API answers after creation.
    const row = await s.app.db.selectFrom('webhook_endpoints').select('secret_sealed').where('id', '=', created.body.id).executeTakeFirstOrThrow();
    assert.ok(!row.secret_sealed.includes(secret.slice(6)));
    assert.ok(!s.rawLogs.join('').includes(secret.slice(6)));
  });

  test('a delivery is signed with the secret shown at creation', async () => {
    const ws = await seedWorkspace(s.app);
    const created = await s.request('POST', '/v1/webhooks', { token: ws.ownerToken, body: { url: `${rx.url}/owner` } });
    assert.equal(created.status, 201);
    await emitMessage(s.app, ws.workspaceId, ws.inboxId);
    await s.app.jobs.drain();
    const got = rx.received.filter((r) => r.path === '/owner');
    assert.equal(got.length, 1);
    verifyDelivery(got[0], created.body.secret, s.clock);
  });

  test('pages of endpoints, newest first', async () => {
    const ws = await seedWorkspace(s.app);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await s.request('POST', '/v1/webhooks', { token: ws.apiKey, body: { url: `${rx.url}/p${i}` } })).body.id);
    const first = await s.request('GET', '/v1/webhooks?limit=3', { token: ws.apiKey });
    assert.deepEqual(
      first.body.data.map((e: any) => e.id),
      ids.slice().reverse().slice(0, 3),
    );
    const second = await s.request('GET', `/v1/webhooks?limit=3&cursor=${first.body.next_cursor}`, { token: ws.apiKey });
    assert.deepEqual(
      second.body.data.map((e: any) => e.id),
      ids.slice().reverse().slice(3),
    );
    assert.equal(second.body.next_cursor, null);
  });

  test('bad input is refused with invalid_request and changes nothing', async () => {
    const ws = await seedWorkspace(s.app);
    for (const body of [
      {},
      { url: 42 },
      { url: `${rx.url}/x`, events: [] },
      { url: `${rx.url}/x`, events: ['message.deleted'] },
      { url: `${rx.url}/x`, events: ['migration.updated'] },
      { url: `${rx.url}/x`, inbox_id: 'inb_missing' },
      { url: `${rx.url}/x`, include_notes: 'yes' },
      { url: `${rx.url}/x`, secret: 'whsec_mine' },
    ]) {
      const r = await s.request('POST', '/v1/webhooks', { token: ws.apiKey, body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error.code, 'invalid_request');
    }
    const list = await s.request('GET', '/v1/webhooks', { token: ws.apiKey });
    assert.equal(list.body.data.length, 0);
    const other = await seedWorkspace(s.app);
    const foreignInbox = await s.request('POST', '/v1/webhooks', { token: ws.apiKey, body: { url: `${rx.url}/x`, inbox_id: other.inboxId } });
    assert.equal(foreignInbox.status, 400, 'an inbox of another workspace');
  });

  test('who may: owners, admins and keys with webhooks:manage; not agents or keys without the scope', async () => {
    const ws = await seedWorkspace(s.app);
    const admin = await addPerson(s.app, ws.workspaceId, 'admin');
    const agent = await addPerson(s.app, ws.workspaceId, 'agent');
    const scoped = await createApiKey(s.app, { workspaceId: ws.workspaceId, name: 'hooks', scopes: ['webhooks:manage'] });
    const unscoped = await createApiKey(s.app, { workspaceId: ws.workspaceId, name: 'read', scopes: ['conversations:read'] });
    for (const token of [ws.ownerToken, admin.token, scoped.secret]) {
      const r = await s.request('POST', '/v1/webhooks', { token, body: { url: `${rx.url}/who` } });
      assert.equal(r.status, 201);
    }
    for (const token of [agent.token, unscoped.secret]) {
      const r = await s.request('POST', '/v1/webhooks', { token, body: { url: `${rx.url}/who` } });
      assert.equal(r.status, 403);
      assert.equal(r.body.error.code, 'forbidden');
      assert.equal((await s.request('GET', '/v1/webhooks', { token })).status, 403);
    }
    assert.equal((await s.request('POST', '/v1/webhooks', { body: { url: `${rx.url}/who` } })).status, 401);
  });

  test('a key limited to one inbox manages only endpoints filtered to its inboxes', async () => {
    const ws = await seedWorkspace(s.app);
    const second = await createInbox(s.app, { workspaceId: ws.workspaceId, name: 'Second' });
    const limited = await createApiKey(s.app, { workspaceId: ws.workspaceId, name: 'limited', scopes: ['webhooks:manage'], inboxIds: [ws.inboxId] });
    const wide = await s.request('POST', '/v1/webhooks', { token: limited.secret, body: { url: `${rx.url}/l` } });
    assert.equal(wide.status, 403, 'a workspace-wide endpoint would see other inboxes');
    const elsewhere = await s.request('POST', '/v1/webhooks', { token: limited.secret, body: { url: `${rx.url}/l`, inbox_id: second.id } });
    assert.equal(elsewhere.status, 400);
    const own = await s.request('POST', '/v1/webhooks', { token: limited.secret, body: { url: `${rx.url}/l`, inbox_id: ws.inboxId } });
    assert.equal(own.status, 201);
    const workspaceWide = await s.request('POST', '/v1/webhooks', { token: ws.apiKey, body: { url: `${rx.url}/l` } });
    const listed = await s.request('GET', '/v1/webhooks', { token: limited.secret });
    assert.deepEqual(
      listed.body.data.map((e: any) => e.id),
      [own.body.id],
    );
    assert.equal((await s.request('GET', `/v1/webhooks/${workspaceWide.body.id}`, { token: limited.secret })).status, 404);
    assert.equal((await s.request('DELETE', `/v1/webhooks/${workspaceWide.body.id}`, { token: limited.secret })).status, 404);
  });

  test('endpoints of another workspace are not found', async () => {
    const ws = await seedWorkspace(s.app);
    const other = await seedWorkspace(s.app);
    const created = await s.request('POST', '/v1/webhooks', { token: other.apiKey, body: { url: `${rx.url}/o` } });
    for (const [method, path] of [
      ['GET', `/v1/webhooks/${created.body.id}`],
      ['PATCH', `/v1/webhooks/${created.body.id}`],
      ['DELETE', `/v1/webhooks/${created.body.id}`],
      ['POST', `/v1/webhooks/${created.body.id}/enable`],
      ['POST', `/v1/webhooks/${created.body.id}/secret`],
      ['GET', `/v1/webhooks/${created.body.id}/deliveries`],
      ['GET', `/v1/webhooks/${created.body.id}/attempts`],
    ]) {
      const r = await s.request(method, path, { token: ws.apiKey, body: method === 'PATCH' ? { include_notes: true } : undefined });
      assert.equal(r.status, 404, `${method} ${path}`);
    }
  });

  test('delete: the endpoint, its deliveries and attempts go; nothing more is sent', async () => {
    const ws = await seedWorkspace(s.app);
    const created = await s.request('POST', '/v1/webhooks', { token: ws.apiKey, body: { url: `${rx.url}/del` } });
    await emitMessage(s.app, ws.workspaceId, ws.inboxId);
    await s.app.jobs.drain();
    const del = await s.request('DELETE', `/v1/webhooks/${created.body.id}`, { token: ws.apiKey });
    assert.equal(del.status, 204);
    assert.equal((await s.request('GET', `/v1/webhooks/${created.body.id}`, { token: ws.apiKey })).status, 404);
    const left = await s.app.db.selectFrom('webhook_deliveries').select('event_seq').where('endpoint_id', '=', created.body.id).execute();
    assert.equal(left.length, 0);
    await emitMessage(s.app, ws.workspaceId, ws.inboxId);
    await s.app.jobs.drain();
    assert.equal(rx.received.filter((r) => r.path === '/del').length, 1);
  });

  test('the OpenAPI document describes the webhook, event and realtime routes', async () => {
    const doc = await s.request('GET', '/v1/openapi.json');
    for (const p of [
      '/v1/webhooks',
      '/v1/webhooks/{webhookId}',
      '/v1/webhooks/{webhookId}/secret',
      '/v1/webhooks/{webhookId}/deliveries',
      '/v1/webhooks/{webhookId}/attempts',
      '/v1/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver',
      '/v1/webhooks/{webhookId}/enable',
      '/v1/events',
      '/v1/realtime',
    ]) {
      assert.ok(doc.body.paths[p], p);
    }
  });
});

describe('workspace deletion and retention steps for webhooks, events and connections', () => {
  test('a deleted workspace’s endpoints, deliveries, attempts, events and connections go in batches; others stay', async () => {
    const { workspaceDataSteps, retentionRules } = await import('../../src/lifecycle/registry.js');
    const { markConnection } = await import('../../src/realtime/connections.js');
    const rx = await startReceiver();
    const s = await startTestServer({ clock: new ManualClock(), env: { SVC_WEBHOOK_ALLOW_PRIVATE: '1' } });
    try {
      const gone = await seedWorkspace(s.app);
      const kept = await seedWorkspace(s.app);
      for (const ws of [gone, kept]) {
        await s.request('POST', '/v1/webhooks', { token: ws.apiKey, body: { url: `${rx.url}/a` } });
        await s.request('POST', '/v1/webhooks', { token: ws.apiKey, body: { url: `${rx.url}/b` } });
        for (let i = 0; i < 7; i++) await emitMessage(s.app, ws.workspaceId, ws.inboxId);
        await markConnection(s.app, { workspaceId: ws.workspaceId, kind: 'member', subjectId: ws.ownerId });
      }
      await s.app.jobs.drain();
      const count = async (table: 'webhook_endpoints' | 'webhook_deliveries' | 'webhook_attempts' | 'events' | 'realtime_connections', ws: string) =>
        Number(
          (
            await s.app.db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .where('workspace_id', '=', ws)
              .executeTakeFirstOrThrow()
          ).n,
        );
      assert.equal(await count('webhook_attempts', gone.workspaceId), 14);
      for (const name of ['webhooks', 'events', 'realtime_connections']) {
        const step = workspaceDataSteps.find((x) => x.name === name)!;
        let rounds = 0;
        for (;;) {
          const { rows } = await step.deleteBatch(s.app, gone.workspaceId, 5);
          assert.ok(rows <= 5, `${name}: a batch is at most 5 rows`);
          if (rows === 0) break;
          rounds++;
        }
        assert.ok(rounds >= 1, name);
      }
      for (const table of ['webhook_endpoints', 'webhook_deliveries', 'webhook_attempts', 'events', 'realtime_connections'] as const) {
        assert.equal(await count(table, gone.workspaceId), 0, table);
        assert.ok((await count(table, kept.workspaceId)) > 0, `${table} of another workspace stays`);
      }
      assert.deepEqual(
        retentionRules.map((r) => r.name).filter((n) => ['webhook_deliveries', 'events', 'realtime_connections'].includes(n)),
        ['webhook_deliveries', 'events', 'realtime_connections'],
      );
    } finally {
      await s.stop();
      await rx.close();
    }
  });
});
