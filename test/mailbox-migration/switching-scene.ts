// The Dovecot, SMTP sinks, server and workspace that the tests of switching delivery
// (switching.test.ts, switching-limits.test.ts) share, and the helpers they drive a migration with.
import assert from 'node:assert/strict';
import { ManualClock, MINUTE } from '../../src/platform/clock.js';
import { startDovecot } from '../helpers/dovecot.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { INGRESS_SECRET, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { expectState, SUPPORT_PASSWORD } from '../helpers/migration.js';
import { startTestServer, type TestServer, testEnv } from '../helpers/server.js';
import { startSmtpSink } from '../helpers/smtp-sink.js';

export const FORWARDING_DOMAIN = 'in.svc.test';

export type SwitchingScene = Awaited<ReturnType<typeof startSwitchingScene>>;

/**
 * A Dovecot with `users` (password SUPPORT_PASSWORD), an SMTP sink for the server's own mail (test
 * messages) and one for the channels' replies, a server on a clock moved by hand (jobs run when the
 * test drains them) with SVC_FORWARDING_DOMAIN, and a workspace. `s` is replaced when a test
 * restarts the server; the helpers read it from the scene. Close with stopSwitchingScene.
 */
export async function startSwitchingScene(users: string[]) {
  const now = new Date();
  const clock = new ManualClock(now);
  const d = await startDovecot();
  const started: { close(): Promise<void> }[] = [];
  try {
    for (const user of users) d.addUser(user, SUPPORT_PASSWORD);
    const sink = await startSmtpSink();
    started.push(sink);
    const replies = await startSmtpSink(SINK_LOGIN);
    started.push(replies);
    const te = await testEnv({
      SVC_MIGRATION_ALLOW_PRIVATE: '1',
      SVC_INGRESS_SECRET: INGRESS_SECRET,
      SVC_FORWARDING_DOMAIN: FORWARDING_DOMAIN,
      SVC_SMTP_HOST: '127.0.0.1',
      SVC_SMTP_PORT: String(sink.port),
      SVC_SMTP_TLS: 'none',
      SVC_SMTP_FROM: 'svc@svc.test',
    });
    started.push({ close: () => te.cleanup() });
    const first: TestServer = await startTestServer({ clock, testEnv: te });
    started.unshift({ close: () => first.stop() });
    await first.app.jobs.stop();
    const seed = await seedWorkspace(first.app);

    const at = (ms: number) => new Date(clock.now().getTime() + ms);
    const api = (method: string, path: string, body?: unknown) => scene.s.request(method, path, { token: seed.apiKey, body });
    const drain = () => scene.s.app.jobs.drain();
    const poll = async () => {
      clock.advance(2 * MINUTE);
      await drain();
    };
    const conversationOf = async (rfcId: string) => {
      const row = await scene.s.app.db
        .selectFrom('messages')
        .select('conversation_id')
        .where('workspace_id', '=', seed.workspaceId)
        .where('mail_message_id', '=', rfcId)
        .executeTakeFirst();
      return row ? scene.s.app.db.selectFrom('conversations').selectAll().where('id', '=', row.conversation_id).executeTakeFirst() : undefined;
    };
    const copies = async (rfcId: string) =>
      (await scene.s.app.db.selectFrom('messages').select('id').where('workspace_id', '=', seed.workspaceId).where('mail_message_id', '=', rfcId).execute())
        .length;

    /** A migration of `user` into a new channel with that address, run to syncing. */
    async function toSyncing(user: string): Promise<{ id: string; forwarding: string }> {
      const channel = await seedEmailChannel(scene.s.app, seed, { address: user, smtpPort: replies.port });
      const created = await api('POST', '/v1/migrations', {
        provider: 'imap',
        source_address: user,
        imap: { host: '127.0.0.1', port: d.port, tls: 'none' },
        inbox_id: seed.inboxId,
        channel_id: channel.id,
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const mid = created.body.id;
      assert.equal((await api('PUT', `/v1/migrations/${mid}/credentials`, { password: SUPPORT_PASSWORD })).status, 200);
      assert.equal((await api('POST', `/v1/migrations/${mid}/test`)).body.ok, true);
      await api('POST', `/v1/migrations/${mid}/scan`);
      await drain();
      await expectState(scene.s, seed.apiKey, mid, 'ready');
      assert.equal((await api('POST', `/v1/migrations/${mid}/start`)).status, 202);
      await drain();
      await expectState(scene.s, seed.apiKey, mid, 'syncing');
      return { id: mid, forwarding: channel.forwarding_address! };
    }

    const scene = { d, s: first, te, sink, replies, seed, now, clock, at, api, drain, poll, conversationOf, copies, toSyncing };
    return scene;
  } catch (error) {
    for (const part of started) await part.close();
    await d.stop();
    throw error;
  }
}

/** Ends what startSwitchingScene started (the server running now); any part may be missing (a failed `before`). */
export async function stopSwitchingScene(scene: Partial<SwitchingScene> | undefined): Promise<void> {
  await scene?.s?.stop();
  await scene?.te?.cleanup();
  await scene?.sink?.close();
  await scene?.replies?.close();
  await scene?.d?.stop();
}
