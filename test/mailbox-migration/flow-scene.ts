// The Dovecot with the old support mailbox, the server and workspace that the tests of a migration
// from create to syncing (flow.test.ts, flow-copy.test.ts) share, and the choices their dry run makes.

import { ManualClock } from '../../src/platform/clock.js';
import { startDovecot } from '../helpers/dovecot.js';
import { addPerson, seedWorkspace } from '../helpers/fixtures.js';
import { seedEmailChannel } from '../helpers/mail.js';
import { daysAgo } from '../helpers/mailbox.js';
import { COLLEAGUE, fillOldMailbox, SUPPORT, SUPPORT_PASSWORD } from '../helpers/migration.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startReceiver } from '../helpers/webhooks.js';

export const MAX_MESSAGE = 200_000;

export type FlowScene = Awaited<ReturnType<typeof startFlowScene>>;

/**
 * A Dovecot with SUPPORT's old mailbox (fillOldMailbox), a server on a clock moved by hand whose
 * background work runs when the test drains it, a workspace with SUPPORT's e-mail channel and an
 * agent, and a webhook receiver. Close with stopFlowScene.
 */
export async function startFlowScene() {
  const now = new Date();
  const clock = new ManualClock(now);
  const d = await startDovecot();
  let server: TestServer | undefined;
  try {
    d.addUser(SUPPORT, SUPPORT_PASSWORD);
    const s = await startTestServer({
      clock,
      env: {
        SVC_MIGRATION_ALLOW_PRIVATE: '1',
        SVC_WEBHOOK_ALLOW_PRIVATE: '1',
        SVC_MIGRATION_MAX_MESSAGE_BYTES: String(MAX_MESSAGE),
        SVC_ATTACHMENT_MAX_BYTES: '50000',
      },
    });
    server = s;
    // Background work runs when the test drains it.
    await s.app.jobs.stop();
    const seed = await seedWorkspace(s.app);
    const ownerEmail = (await s.app.db.selectFrom('people').select('email').where('id', '=', seed.ownerId).executeTakeFirstOrThrow()).email;
    const channelId = (await seedEmailChannel(s.app, seed, { address: SUPPORT })).id;
    const agentToken = (await addPerson(s.app, seed.workspaceId, 'agent')).token;
    const box = await fillOldMailbox(d, now, { ownerEmail, bigBytes: MAX_MESSAGE + 50_000 });
    const rx = await startReceiver();
    const api = (method: string, path: string, body?: unknown, token = seed.apiKey) => s.request(method, path, { token, body });
    return { d, s, seed, rx, box, channelId, ownerEmail, agentToken, now, clock, api };
  } catch (error) {
    await server?.stop();
    await d.stop();
    throw error;
  }
}

/** Ends what startFlowScene started; any part may be missing (a failed `before`). */
export async function stopFlowScene(scene: Partial<FlowScene> | undefined): Promise<void> {
  await scene?.s?.stop();
  await scene?.rx?.close();
  await scene?.d?.stop();
}

/** The choices of the dry run: all folders but Junk's mail, 400 days, Archive labelled, the owner mapped, originals kept. */
export function dryRunChoices(scene: FlowScene) {
  return {
    folders: ['INBOX', 'Sent', 'Archive', 'Junk'],
    date_from: daysAgo(scene.now, 400).toISOString().slice(0, 10),
    folder_labels: { Archive: 'Archived' },
    team_members: { [COLLEAGUE]: null, [scene.ownerEmail]: scene.seed.ownerId },
    keep_originals: true,
  };
}
