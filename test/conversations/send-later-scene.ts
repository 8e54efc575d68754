// The server, workspace, e-mail channel, webhook and SMTP sink that the undo-send and send-later
// tests (send-later.test.ts, send-later-held.test.ts) share.
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/platform/clock.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { INGRESS_SECRET, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer } from '../helpers/server.js';
import { startSmtpSink } from '../helpers/smtp-sink.js';
import { startReceiver, verifyDelivery } from '../helpers/webhooks.js';

export type SendLaterScene = Awaited<ReturnType<typeof startSendLaterScene>>;

/**
 * A server on a clock moved by hand whose jobs run only when a test drains them, a workspace with an
 * e-mail channel sending to an SMTP sink, and a webhook for message.created and conversation.created.
 * Close with stopSendLaterScene.
 */
export async function startSendLaterScene() {
  const clock = new ManualClock('2030-01-01T00:00:00Z');
  const sink = await startSmtpSink(SINK_LOGIN);
  const s = await startTestServer({ clock, env: { SVC_WEBHOOK_ALLOW_PRIVATE: '1', SVC_INGRESS_SECRET: INGRESS_SECRET } });
  await s.app.jobs.stop();
  const rx = await startReceiver();
  const seed = await seedWorkspace(s.app);
  const address = (await seedEmailChannel(s.app, seed, { smtpPort: sink.port })).address!;
  const r = await s.request('POST', '/v1/webhooks', {
    token: seed.apiKey,
    body: { url: `${rx.url}/hook`, events: ['message.created', 'conversation.created'] },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const hook = { path: '/hook', secret: r.body.secret };

  const hooked = (messageId: string) =>
    rx.received
      .filter((r) => r.path === hook.path && r.body.includes(messageId))
      .map((r) => verifyDelivery(r, hook.secret, clock))
      .filter((p) => p.data.message.id === messageId);
  const later = (ms: number) => new Date(clock.now().getTime() + ms).toISOString();

  return { s, clock, rx, sink, seed, address, hook, hooked, later };
}

/** Ends what startSendLaterScene started; any part may be missing (a failed `before`). */
export async function stopSendLaterScene(scene: Partial<SendLaterScene> | undefined): Promise<void> {
  await scene?.rx?.close();
  await scene?.s?.stop();
  await scene?.sink?.close();
}
