// The server, workspaces, e-mail channel, webhook and SMTP sink that the merge and split tests
// (merge.test.ts, split.test.ts) share, with the helpers they read rows and deliveries with.
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/platform/clock.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer } from '../helpers/server.js';
import { startSmtpSink } from '../helpers/smtp-sink.js';
import { startReceiver, verifyDelivery } from '../helpers/webhooks.js';

export const MIN = 60_000;

export type MergeScene = Awaited<ReturnType<typeof startMergeScene>>;

/**
 * A server on a clock moved by hand whose jobs run only when a test drains them, two workspaces, an
 * e-mail channel sending to an SMTP sink, and a webhook for conversation and message events.
 * Close with stopMergeScene.
 */
export async function startMergeScene() {
  const clock = new ManualClock('2031-03-01T09:00:00Z');
  const sink = await startSmtpSink(SINK_LOGIN);
  const s = await startTestServer({ clock, env: { SVC_WEBHOOK_ALLOW_PRIVATE: '1', SVC_INGRESS_SECRET: INGRESS_SECRET } });
  await s.app.jobs.stop(); // jobs (mail sending) run only when a test drains them
  const seed = await seedWorkspace(s.app);
  const other = await seedWorkspace(s.app);
  const channel = await seedEmailChannel(s.app, seed, { smtpPort: sink.port });
  const address = channel.address!;
  const channelId = channel.id;
  const rx = await startReceiver();
  const r = await s.request('POST', '/v1/webhooks', {
    token: seed.apiKey,
    body: { url: `${rx.url}/hook`, events: ['conversation.updated', 'message.created', 'conversation.created'] },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const hook = { path: '/hook', secret: r.body.secret };

  const api = (method: string, path: string, body?: unknown) => s.request(method, path, { token: seed.apiKey, body });
  async function mail(headers: Record<string, string>, body?: string) {
    clock.advance(MIN);
    return deliverMail(s, address, headers, body);
  }
  const messagesOf = async (id: string) => (await api('GET', `/v1/conversations/${id}/messages?order=asc&limit=200`)).body.data as any[];

  /** Every row a merge may touch, of these conversations, as stored. */
  async function rows(ids: string[]) {
    const db = s.app.db;
    return {
      conversations: await db.selectFrom('conversations').selectAll().where('id', 'in', ids).orderBy('id').execute(),
      messages: await db.selectFrom('messages').selectAll().where('conversation_id', 'in', ids).orderBy('id').execute(),
      attachments: await db.selectFrom('attachments').selectAll().where('conversation_id', 'in', ids).orderBy('id').execute(),
      // The label rows' copies of their conversation's status and activity follow it (test/conversations/label-list.test.ts).
      labels: await db
        .selectFrom('conversation_labels')
        .select(['conversation_id', 'label'])
        .where('conversation_id', 'in', ids)
        .orderBy('conversation_id')
        .orderBy('label')
        .execute(),
      mailIds: await db.selectFrom('mail_ids').selectAll().where('conversation_id', 'in', ids).orderBy('rfc_id').execute(),
      digests: await db.selectFrom('mail_digests').selectAll().where('conversation_id', 'in', ids).orderBy('digest').execute(),
    };
  }

  /** The verified webhook deliveries that `pick` keeps, once there are `count` of them (deliveries are sent in the background). */
  async function deliveries(from: number, pick: (p: any) => boolean, count: number) {
    for (let round = 0; ; round++) {
      const got = rx.received
        .slice(from)
        .filter((r) => r.path === hook.path && pick(JSON.parse(r.body)))
        .map((r) => verifyDelivery(r, hook.secret, clock));
      if (got.length >= count) return got;
      if (round === 500) {
        const rows = await s.app.db.selectFrom('webhook_deliveries').selectAll().orderBy('event_seq', 'desc').limit(5).execute();
        assert.fail(`${got.length} of ${count} deliveries; latest: ${JSON.stringify(rows)}`);
      }
      await s.app.jobs.drain(); // the webhook outbox is drained with the jobs
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  return { s, clock, seed, other, address, channelId, rx, sink, hook, api, mail, messagesOf, rows, deliveries };
}

/** Ends what startMergeScene started; any part may be missing (a failed `before`). */
export async function stopMergeScene(scene: Partial<MergeScene> | undefined): Promise<void> {
  await scene?.rx?.close();
  await scene?.s?.stop();
  await scene?.sink?.close();
}
