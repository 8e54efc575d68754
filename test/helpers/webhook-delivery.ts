// What the webhook delivery tests (test/webhooks/payloads, retries, delivery-log) start from, one per
// test file: a real server on a movable clock that may send to 127.0.0.1, a receiver there, and the
// endpoint and table helpers they share.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { ManualClock } from '../../src/platform/clock.js';
import type { Seed } from './fixtures.js';
import { startTestServer, type TestServer } from './server.js';
import { type Receiver, startReceiver } from './webhooks.js';

/**
 * Call inside a `describe`: starts the server and the receiver before its tests (handing them to
 * `onStart`) and stops them after.
 */
export function deliveryScene(onStart: (started: { s: TestServer; rx: Receiver }) => void) {
  const clock = new ManualClock('2030-01-01T00:00:00Z');
  let s: TestServer;
  let rx: Receiver;
  before(async () => {
    s = await startTestServer({ clock, env: { SVC_WEBHOOK_ALLOW_PRIVATE: '1' } });
    rx = await startReceiver();
    onStart({ s, rx });
  });
  after(async () => {
    await rx?.close();
    await s?.stop();
  });

  const drain = () => s.app.jobs.drain();
  /** A webhook endpoint of the seed's workspace, at its own path on the receiver. */
  async function endpoint(seed: Seed, body: Record<string, unknown> = {}, path = `/${Math.random().toString(36).slice(2)}`) {
    const r = await s.request('POST', '/v1/webhooks', { token: seed.apiKey, body: { url: rx.url + path, ...body } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return { id: r.body.id as string, secret: r.body.secret as string, path };
  }
  const at = (path: string) => rx.received.filter((r) => r.path === path);
  const deliveries = (endpointId: string) =>
    s.app.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpointId).orderBy('event_seq').execute();
  const attempts = (endpointId: string) =>
    s.app.db.selectFrom('webhook_attempts').selectAll().where('endpoint_id', '=', endpointId).orderBy('started_at').orderBy('id').execute();
  const endpointRow = (id: string) => s.app.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  return { clock, drain, endpoint, at, deliveries, attempts, endpointRow };
}
