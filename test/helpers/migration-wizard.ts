// What the migration wizard's browser tests against Dovecot (test/e2e/migration-wizard-steps,
// migration-wizard-states) start from, one per test file: a real Dovecot with the given users
// (password SUPPORT_PASSWORD; `prepare` fills their mailboxes), a real server that may reach it on
// loopback, with its own mail going to an SMTP sink and a forwarding domain, whose background work
// runs only when the test drains it (every state stays put until then), the workspace "Acme", and
// Chromium. expectScreen() checks the wizard's action bar against the migration's allowed_actions.
import assert from 'node:assert/strict';
import type { BrowserContext, Page } from 'playwright-core';
import { systemClock } from '../../src/platform/clock.js';
import { type BrowserSession, launchBrowser, panelPage } from './browser.js';
import { type Dovecot, startDovecot } from './dovecot.js';
import { type Seed, seedWorkspace } from './fixtures.js';
import { INGRESS_SECRET } from './mail.js';
import { SUPPORT_PASSWORD } from './migration.js';
import { startTestServer, type TestServer } from './server.js';
import { type SmtpSink, startSmtpSink } from './smtp-sink.js';

export const FORWARDING_DOMAIN = 'in.svc.test';

export interface WizardScene {
  d: Dovecot;
  s: TestServer;
  seed: Seed;
  /** Catches the mail svc sends from its own account (the test message). */
  sink: SmtpSink;
  browser: BrowserSession;
  ownerEmail: string;
  /** The API with the workspace's key. */
  api(method: string, path: string, body?: unknown): ReturnType<TestServer['request']>;
  /** The panel signed in with `token`, 1280×800 unless asked. */
  panelPage(token: string, opts?: { width?: number; height?: number }): Promise<{ context: BrowserContext; page: Page; errors: string[] }>;
  /** Waits until the page shows the migration in `state`, then checks its action bar against the API; returns the migration. */
  expectScreen(page: Page, id: string, state: string): Promise<any>;
  stop(): Promise<void>;
}

export async function startWizardScene(opts: { users: string[]; prepare?: (scene: { d: Dovecot; ownerEmail: string }) => unknown }): Promise<WizardScene> {
  let d: Dovecot | undefined;
  let sink: SmtpSink | undefined;
  let s: TestServer | undefined;
  let browser: BrowserSession | undefined;
  const stop = async () => {
    await browser?.close();
    await s?.stop();
    await sink?.close();
    await d?.stop();
  };
  try {
    const dovecot = await startDovecot();
    d = dovecot;
    for (const user of opts.users) dovecot.addUser(user, SUPPORT_PASSWORD);
    sink = await startSmtpSink();
    const server = await startTestServer({
      clock: systemClock,
      env: {
        SVC_MIGRATION_ALLOW_PRIVATE: '1',
        SVC_MIGRATION_MAX_MESSAGE_BYTES: '200000',
        SVC_MIGRATION_QUIET_HOURS: '1',
        SVC_INGRESS_SECRET: INGRESS_SECRET,
        SVC_FORWARDING_DOMAIN: FORWARDING_DOMAIN,
        SVC_SMTP_HOST: '127.0.0.1',
        SVC_SMTP_PORT: String(sink.port),
        SVC_SMTP_TLS: 'none',
        SVC_SMTP_FROM: 'svc@svc.test',
      },
    });
    s = server;
    // Background work runs when the test drains it: every state stays put until then.
    await server.app.jobs.stop();
    // Addresses of .test domains have no MX records here; nothing leaves 127.0.0.1.
    server.app.resolveMx = async () => [];
    const seed = await seedWorkspace(server.app, { name: 'Acme' });
    const ownerEmail = (await server.app.db.selectFrom('people').select('email').where('id', '=', seed.ownerId).executeTakeFirstOrThrow()).email;
    await opts.prepare?.({ d: dovecot, ownerEmail });
    const session = await launchBrowser();
    browser = session;
    const api = (method: string, path: string, body?: unknown) => server.request(method, path, { token: seed.apiKey, body });
    return {
      d: dovecot,
      s: server,
      seed,
      sink,
      browser: session,
      ownerEmail,
      api,
      panelPage: (token, opts = {}) => panelPage(session, server.url, token, { viewport: { width: opts.width ?? 1280, height: opts.height ?? 800 } }),
      expectScreen: (page, id, state) => expectScreen(api, page, id, state),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function expectScreen(api: WizardScene['api'], page: Page, id: string, state: string) {
  await page.locator(`h1 [data-state="${state}"]`).waitFor();
  const m = (await api('GET', `/v1/migrations/${id}`)).body;
  assert.equal(m.state, state);
  const shown = await page.locator('.mig-actions [data-action]').evaluateAll((els) => els.map((e) => e.getAttribute('data-action') ?? ''));
  // Exactly the allowed actions, less those that would do nothing here (issue 43 item 11): "Retry
  // failed messages" with no failed message, and a link to a form on the step shown or not open yet.
  const links = await page.locator('.mig-actions a[data-action]').evaluateAll((els) => els.map((e) => e.getAttribute('data-action') ?? ''));
  assert.ok(
    shown.every((a) => m.allowed_actions.includes(a)),
    `only allowed actions while ${state}: ${shown.join(', ')}`,
  );
  const hidden = (m.allowed_actions as string[]).filter((a) => !shown.includes(a));
  const buttonActions = ['scan', 'start', 'pause', 'resume', 'cancel', 'retry', 'probe', 'finish', 'remove_history', 'delete'];
  assert.ok(
    hidden.every((a) => (a === 'retry' && m.progress.failed === 0) || !buttonActions.includes(a)),
    `hidden while ${state}: ${hidden.join(', ')} (failed: ${m.progress.failed})`,
  );
  assert.equal(shown.includes('retry'), m.allowed_actions.includes('retry') && m.progress.failed > 0, 'Retry only with failed messages');
  assert.ok(links.every((a) => !buttonActions.includes(a)));
  // The step's next action comes first; the ones that end or delete something come last, apart.
  const primary = await page.locator('.mig-actions .btn-primary').evaluateAll((els) => els.map((e) => e.getAttribute('data-action')));
  if (primary.length) assert.equal(shown[0], primary[0], `the next action first while ${state}: ${shown.join(', ')}`);
  const danger = ['cancel', 'delete', 'remove_history'];
  const firstDanger = shown.findIndex((a) => danger.includes(a));
  if (firstDanger >= 0) {
    assert.ok(
      shown.slice(firstDanger).every((a) => danger.includes(a)),
      `destructive actions last while ${state}: ${shown.join(', ')}`,
    );
    assert.equal(await page.locator('.mig-actions .mig-actions-danger').getAttribute('data-action'), shown[firstDanger]);
  }
  return m;
}
