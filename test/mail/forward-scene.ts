// The server, workspaces, e-mail channels, webhook and SMTP sink that the tests of forwarding
// (forward.test.ts) and of new conversations by mail (new-conversation.test.ts) share, with the
// helpers they send, count and read deliveries with.
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/platform/clock.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer } from '../helpers/server.js';
import { type CaughtMail, startSmtpSink } from '../helpers/smtp-sink.js';
import { startReceiver, verifyDelivery } from '../helpers/webhooks.js';

export const SECRET = 'forward-secret';
export const MAX_BYTES = 100_000;

type Address = { name: string | null; address: string };

export function header(mail: CaughtMail, field: 'to' | 'cc' | 'bcc'): Address[] {
  const v = mail.parsed[field];
  if (!v) return [];
  return (Array.isArray(v) ? v : [v]).flatMap((a) => a.value.map((x) => ({ name: x.name || null, address: x.address! })));
}

export type ForwardScene = Awaited<ReturnType<typeof startForwardScene>>;

/**
 * A server on a clock moved by hand whose jobs run only when a test drains them, two workspaces with
 * an e-mail channel each sending to an SMTP sink, and a webhook of the first for conversation.created
 * and message.created. Close with stopForwardScene.
 */
export async function startForwardScene() {
  const clock = new ManualClock('2030-03-04T10:00:00Z');
  const sink = await startSmtpSink(SINK_LOGIN);
  const s = await startTestServer({ clock, env: { SVC_INGRESS_SECRET: SECRET, SVC_WEBHOOK_ALLOW_PRIVATE: '1', SVC_ATTACHMENT_MAX_BYTES: String(MAX_BYTES) } });
  await s.app.jobs.stop(); // jobs run only when the test drains them
  const seed = await seedWorkspace(s.app);
  const other = await seedWorkspace(s.app);
  const address = (await seedEmailChannel(s.app, seed, { smtpPort: sink.port })).address!;
  await seedEmailChannel(s.app, other, { smtpPort: sink.port });
  const rx = await startReceiver();
  const path = '/hooks';
  const r = await s.request('POST', '/v1/webhooks', {
    token: seed.apiKey,
    body: { url: rx.url + path, events: ['conversation.created', 'message.created'] },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const hook = { path, secret: r.body.secret };

  async function inbound(raw: Buffer) {
    const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, { raw, token: SECRET });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.data[0] as { conversation_id: string; message_id: string };
  }

  async function sendAll(): Promise<CaughtMail> {
    const count = sink.messages.length;
    await s.app.jobs.drain();
    const caught = await sink.waitFor(count + 1);
    assert.equal(caught.length, count + 1, 'one mail sent');
    return caught[count];
  }

  const counts = async () => ({
    messages: Number(
      (
        await s.app.db
          .selectFrom('messages')
          .select((e) => e.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    ),
    conversations: Number(
      (
        await s.app.db
          .selectFrom('conversations')
          .select((e) => e.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    ),
    contacts: Number(
      (
        await s.app.db
          .selectFrom('contacts')
          .select((e) => e.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    ),
    jobs: Number(
      (
        await s.app.db
          .selectFrom('jobs')
          .select((e) => e.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    ),
  });

  async function webhooksFor(type: string, messageId: string) {
    await s.app.jobs.drain();
    return rx.received
      .filter((r) => r.path === hook.path)
      .map((r) => ({ r, p: verifyDelivery(r, hook.secret, clock) }))
      .filter(({ p }) => p.type === type && (p.data.message?.id === messageId || p.data.conversation?.id === messageId));
  }

  return { s, seed, other, clock, address, sink, rx, hook, inbound, sendAll, counts, webhooksFor };
}

/** Ends what startForwardScene started; any part may be missing (a failed `before`). */
export async function stopForwardScene(scene: Partial<ForwardScene> | undefined): Promise<void> {
  await scene?.rx?.close();
  await scene?.s?.stop();
  await scene?.sink?.close();
}
