// The loopback fakes of Zendesk and Help Scout, the server and the workspace that the help-desk
// migration tests (helpdesk-http.test.ts, helpdesk-zendesk.test.ts, helpdesk-help-scout.test.ts) share.
import { ManualClock } from '../../src/platform/clock.js';
import { addPerson, seedWorkspace } from '../helpers/fixtures.js';
import { FakeHelpScout, FakeZendesk } from '../helpers/helpdesk-fakes.js';
import { seedEmailChannel } from '../helpers/mail.js';
import { startTestServer } from '../helpers/server.js';

export const SUPPORT = 'help@acme.test';

/** A time as the providers write it: seconds, no fraction. */
export const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

export type HelpdeskScene = Awaited<ReturnType<typeof startHelpdeskScene>>;

/**
 * Both fakes started, a server on a clock moved by hand (jobs run when the test drains them) that
 * reads them as its Zendesk and Help Scout, a workspace with SUPPORT's e-mail channel and an agent
 * bob@acme.test. Close with stopHelpdeskScene.
 */
export async function startHelpdeskScene() {
  const zendesk = new FakeZendesk();
  const helpScout = new FakeHelpScout();
  const now = new Date();
  const clock = new ManualClock(now);
  await zendesk.start();
  await helpScout.start();
  try {
    const s = await startTestServer({
      clock,
      env: { SVC_MIGRATION_ALLOW_PRIVATE: '1', SVC_MIGRATION_ZENDESK_URL: zendesk.url, SVC_MIGRATION_HELPSCOUT_URL: helpScout.url },
    });
    await s.app.jobs.stop();
    const seed = await seedWorkspace(s.app);
    const channelId = (await seedEmailChannel(s.app, seed, { address: SUPPORT })).id;
    const bob = await addPerson(s.app, seed.workspaceId, 'agent', 'bob@acme.test');
    const api = (method: string, p: string, body?: unknown) => s.request(method, p, { token: seed.apiKey, body });
    const rc = () => ({ ctx: { lookup: s.app.lookup, config: s.app.config } });
    return { s, seed, channelId, bob, zendesk, helpScout, now, clock, api, rc };
  } catch (error) {
    await zendesk.stop();
    await helpScout.stop();
    throw error;
  }
}

/** Ends what startHelpdeskScene started; any part may be missing (a failed `before`). */
export async function stopHelpdeskScene(scene: Partial<HelpdeskScene> | undefined): Promise<void> {
  await scene?.s?.stop();
  await scene?.zendesk?.stop();
  await scene?.helpScout?.stop();
}
