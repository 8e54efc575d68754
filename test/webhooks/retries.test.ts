// Webhook failures end to end: real server (movable clock), a receiver on 127.0.0.1 that fails as
// told. The retry schedule, disabling after 24 hours of failure or at once on 410, redirects not
// followed, the 10 s answer deadline, and at most 64 KiB of an answer read.
import assert from 'node:assert/strict';
import diagnostics_channel from 'node:diagnostics_channel';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { describe, test } from 'node:test';
import { HOUR, MINUTE } from '../../src/platform/clock.js';
import { DISABLED_FAILING, DISABLED_GONE } from '../../src/webhooks/deliveries.js';
import { emitMessage } from '../helpers/events.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import type { TestServer } from '../helpers/server.js';
import { deliveryScene } from '../helpers/webhook-delivery.js';
import type { Receiver } from '../helpers/webhooks.js';

describe('webhook retries and failures', () => {
  let s: TestServer;
  let rx: Receiver;
  const { clock, drain, endpoint, at, deliveries, attempts, endpointRow } = deliveryScene((started) => ({ s, rx } = started));

  test('retry schedule 5 s, 1 min, 5 min, 30 min, 1 h, 2 h, 4 h, 8 h, 9 h with up to 10% jitter, same webhook-id, fresh timestamps; disabled after 24 hours of failure', async () => {
    // The spec's values written out (Delivery and retry rules, Limits), not the code's constants.
    const slots = [5_000, MINUTE, 5 * MINUTE, 30 * MINUTE, HOUR, 2 * HOUR, 4 * HOUR, 8 * HOUR, 9 * HOUR];
    const seed = await seedWorkspace(s.app);
    const ep = await endpoint(seed);
    rx.handler = (r) => (r.path === ep.path ? { status: 500, body: 'boom' } : { status: 200 });
    try {
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await drain();
      const first = clock.now().getTime();
      let last = first;
      const lateBy: number[] = [];
      for (const [i, slot] of slots.entries()) {
        const [d] = await deliveries(ep.id);
        assert.equal(d.status, 'pending');
        assert.equal(d.attempts, i + 1);
        // At most 5 s + 1 min + … + 8 h, plus 10%: about 17 hours of failure so far.
        assert.equal((await endpointRow(ep.id)).disabled_at, null, `still enabled ${((last - first) / HOUR).toFixed(1)} h into the failure`);
        const due = Date.parse(d.next_attempt_at!);
        assert.ok(due - last >= slot && due - last <= slot * 1.1, `retry ${i + 1} comes ${due - last} ms after the failure, slot ${slot} ms`);
        lateBy.push(due - last - slot);
        clock.set(due - 1);
        await drain();
        assert.equal(at(ep.path).length, i + 1, 'nothing is sent before the retry is due');
        clock.set(due);
        await drain();
        assert.equal(at(ep.path).length, i + 2);
        last = due;
      }
      // Each slot gets a random share of its 10%: all nine landing exactly on their slots has odds below 1e-20.
      assert.ok(
        lateBy.some((ms) => ms > 0),
        'retries are spread by jitter',
      );
      const [d] = await deliveries(ep.id);
      assert.equal(d.status, 'failed', 'given up after the ninth retry');
      assert.equal(d.attempts, 10);
      assert.equal(d.next_attempt_at, null);
      const got = at(ep.path);
      assert.equal(new Set(got.map((r) => r.headers['webhook-id'])).size, 1, 'one webhook-id on every retry');
      const stamps = got.map((r) => Number(r.headers['webhook-timestamp']));
      assert.deepEqual(
        stamps,
        [...stamps].sort((a, b) => a - b),
      );
      assert.equal(new Set(stamps).size, stamps.length, 'each attempt is signed at send time');
      // Each attempt verifies at its own time (checked when it arrived: the clock has moved on since).
      const log = await attempts(ep.id);
      assert.equal(log.length, 10);
      assert.deepEqual(
        log.map((a) => a.attempt),
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      );
      assert.ok(log.every((a) => a.outcome === 'failed' && a.status_code === 500 && a.response === 'boom' && a.error === 'the receiver answered 500'));
      // The tenth attempt fails 24 h 36 min 5 s or more after the first: the endpoint is disabled then, with the reason shown.
      assert.ok(last - first >= 24 * HOUR + 36 * MINUTE + 5_000);
      const e = await endpointRow(ep.id);
      assert.equal(e.failing_since, new Date(first).toISOString());
      assert.equal(e.disabled_at, new Date(last).toISOString());
      assert.equal(e.disabled_reason, DISABLED_FAILING);
      const shown = await s.request('GET', `/v1/webhooks/${ep.id}`, { token: seed.apiKey });
      assert.equal(shown.body.enabled, false);
      assert.equal(shown.body.disabled_reason, DISABLED_FAILING);
      assert.ok(s.logs.some((l) => l.msg === 'webhook endpoint disabled' && l.endpoint_id === ep.id));
    } finally {
      rx.handler = () => ({ status: 200, body: 'ok' });
    }
  });

  test('24 hours of unbroken failure disables the endpoint; a success resets the window', async () => {
    const seed = await seedWorkspace(s.app);
    const ep = await endpoint(seed);
    let failing = true;
    rx.handler = (r) => (r.path === ep.path && failing ? { status: 503 } : { status: 204 });
    try {
      const start = clock.now().getTime();
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await drain();
      assert.equal((await endpointRow(ep.id)).failing_since, new Date(start).toISOString());
      // 23 hours later one delivery gets through: the window starts again.
      clock.set(start + 23 * HOUR);
      failing = false;
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await drain();
      assert.equal((await endpointRow(ep.id)).failing_since, null);
      failing = true;
      const restart = clock.now().getTime();
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await drain();
      assert.equal((await endpointRow(ep.id)).failing_since, new Date(restart).toISOString());
      // Just under 24 hours after the new first failure: still enabled.
      clock.set(restart + 24 * HOUR - 1000);
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await drain();
      assert.equal((await endpointRow(ep.id)).disabled_at, null);
      clock.set(restart + 24 * HOUR);
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await drain();
      const e = await endpointRow(ep.id);
      assert.equal(e.disabled_reason, DISABLED_FAILING);
      // Nothing more is sent: open deliveries ended, new events make none.
      const open = (await deliveries(ep.id)).filter((d) => d.status === 'pending');
      assert.equal(open.length, 0);
      const count = (await deliveries(ep.id)).length;
      const sent = at(ep.path).length;
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      clock.advance(10 * HOUR);
      await drain();
      assert.equal((await deliveries(ep.id)).length, count);
      assert.equal(at(ep.path).length, sent);
      // Enable clears the reason; deliveries flow again.
      const enabled = await s.request('POST', `/v1/webhooks/${ep.id}/enable`, { token: seed.apiKey });
      assert.equal(enabled.status, 200);
      assert.equal(enabled.body.enabled, true);
      assert.equal(enabled.body.disabled_reason, null);
      failing = false;
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await drain();
      assert.equal(at(ep.path).length, sent + 1);
    } finally {
      rx.handler = () => ({ status: 200, body: 'ok' });
    }
  });

  test('410 disables the endpoint at once', async () => {
    const seed = await seedWorkspace(s.app);
    const ep = await endpoint(seed);
    rx.handler = (r) => (r.path === ep.path ? { status: 410, body: 'gone' } : { status: 200 });
    try {
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await drain();
      const e = await endpointRow(ep.id);
      assert.ok(e.disabled_at);
      assert.equal(e.disabled_reason, DISABLED_GONE);
      const [d] = await deliveries(ep.id);
      assert.equal(d.status, 'failed');
      clock.advance(HOUR);
      await drain();
      assert.equal(at(ep.path).length, 1, 'no retries after 410');
    } finally {
      rx.handler = () => ({ status: 200, body: 'ok' });
    }
  });

  test('a redirect is a failure and is not followed', async () => {
    const seed = await seedWorkspace(s.app);
    const ep = await endpoint(seed);
    rx.handler = (r) => (r.path === ep.path ? { status: 302, headers: { location: `${rx.url}/elsewhere` } } : { status: 200 });
    try {
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await drain();
      assert.equal(at(ep.path).length, 1);
      assert.equal(at('/elsewhere').length, 0);
      const [a] = await attempts(ep.id);
      assert.equal(a.outcome, 'failed');
      assert.equal(a.status_code, 302);
      assert.match(a.error!, /redirect \(302 to http:\/\/127\.0\.0\.1:\d+\/elsewhere\) not followed/);
      const [d] = await deliveries(ep.id);
      assert.equal(d.status, 'pending');
    } finally {
      rx.handler = () => ({ status: 200, body: 'ok' });
    }
  });

  test('an answer slower than 10 s is a failure; 9 s is in time', async () => {
    const seed = await seedWorkspace(s.app);
    const ep = await endpoint(seed);
    rx.handler = (r) => (r.path === ep.path ? 'hold' : { status: 200 });
    try {
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await rx.waitFor(rx.received.length + 0).then(() => waitUntil(() => at(ep.path).length === 1));
      clock.advance(9_000);
      rx.releaseHeld(200);
      await drain();
      let [a] = await attempts(ep.id);
      assert.equal(a.outcome, 'succeeded');

      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await waitUntil(() => at(ep.path).length === 2);
      clock.advance(11_000); // the receiver would answer after 11 s
      await drain();
      rx.releaseHeld(200);
      const log = await attempts(ep.id);
      a = log[log.length - 1];
      assert.equal(a.outcome, 'failed');
      assert.equal(a.error, 'no complete answer within 10 s');
      assert.equal(a.status_code, null);
    } finally {
      rx.handler = () => ({ status: 200, body: 'ok' });
    }
  });

  test('at most 64 KiB of an answer is read: the connection is closed once that much arrived; the log keeps its start', async () => {
    const seed = await seedWorkspace(s.app);
    const ep = await endpoint(seed);
    const limit = 64 * 1024; // spec Limits: webhook answer bytes read
    const chunkSize = 1024;
    const total = 16 * 1024 * 1024;
    const bodyAt = (offset: number, length: number) => Buffer.from(Array.from({ length }, (_, i) => 97 + ((offset + i) % 26)));
    // The dispatcher's socket for this request. The receiver writes its next chunk only once that
    // socket has read everything written so far (or was closed), so nothing waits in the kernel's
    // buffers and what the receiver could write before the close is what the server read.
    let client: Socket | undefined;
    const onSendHeaders = (message: unknown) => {
      const { request, socket } = message as { request: { path: string }; socket: Socket };
      if (request.path === ep.path) client = socket;
    };
    diagnostics_channel.subscribe('undici:client:sendHeaders', onSendHeaders);
    let written = 0;
    let closed = false;
    let streamed!: () => void;
    const finished = new Promise<void>((resolve) => (streamed = resolve));
    rx.handler = (r) =>
      r.path === ep.path
        ? (res) => {
            res.on('close', () => (closed = true));
            res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(total) });
            void (async () => {
              const giveUp = Date.now() + 20_000;
              while (written < total && !closed && client && Date.now() < giveUp) {
                if (!client.destroyed && client.bytesRead < res.socket!.bytesWritten) {
                  await new Promise(setImmediate);
                  continue;
                }
                if (client.destroyed) break;
                res.write(bodyAt(written, chunkSize));
                written += chunkSize;
              }
              // The receiver's side of the connection closes too (not merely a stalled reader).
              if (!closed) await once(res, 'close', { signal: AbortSignal.timeout(10_000) }).catch(() => {});
              streamed();
            })();
          }
        : { status: 200 };
    try {
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await drain();
      await finished;
      assert.ok(client, 'the request went out on a socket');
      assert.ok(client.destroyed && closed, 'the server closed the connection instead of reading on');
      assert.ok(written >= limit && written <= limit + chunkSize, `the receiver could write ${written} bytes before the close; ${limit} expected`);
      const [a] = await attempts(ep.id);
      assert.equal(a.outcome, 'succeeded', 'a 2xx is a success even when its answer is cut short');
      assert.ok(a.response!.length <= limit, 'the record holds no more than what was read');
      assert.equal(a.response, bodyAt(0, 1024).toString(), 'the attempt log keeps the start of the answer');
    } finally {
      diagnostics_channel.unsubscribe('undici:client:sendHeaders', onSendHeaders);
      rx.handler = () => ({ status: 200, body: 'ok' });
    }
  });
});

async function waitUntil(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
