// What the panel's browser tests (test/e2e/panel-mail, panel-triage, panel-settings) start from, one
// per test file: a real server that sends its own mail (sign-in codes, invites) to one SMTP sink, the
// workspace "Acme" whose Support inbox has an e-mail channel sending through a second sink (the
// customer's mail server, login SINK_LOGIN), and Chromium. panelPage() opens a page that notes every
// request that leaves svc and every error of the page.
import type { BrowserContext, Page } from 'playwright-core';
import { systemClock } from '../../src/platform/clock.js';
import { type BrowserSession, launchBrowser } from './browser.js';
import { type Seed, seedWorkspace } from './fixtures.js';
import { INGRESS_SECRET, SINK_LOGIN, seedEmailChannel } from './mail.js';
import { startTestServer, type TestServer } from './server.js';
import { type SmtpSink, startSmtpSink } from './smtp-sink.js';

export interface PanelScene {
  s: TestServer;
  seed: Seed;
  /** The Support inbox's e-mail address. */
  address: string;
  ownerEmail: string;
  browser: BrowserSession;
  /** Catches the mail svc sends from its own account. */
  systemSink: SmtpSink;
  /** The customer's mail server: the e-mail channel's SMTP account. */
  customerSink: SmtpSink;
  /** A page whose every request must go to svc itself: `outside` lists those that did not, `errors` the page's errors. */
  panelPage(opts?: { width?: number; height?: number; locale?: string }): Promise<{ context: BrowserContext; page: Page; outside: string[]; errors: string[] }>;
  stop(): Promise<void>;
}

export async function startPanelScene(): Promise<PanelScene> {
  let systemSink: SmtpSink | undefined;
  let customerSink: SmtpSink | undefined;
  let s: TestServer | undefined;
  let browser: BrowserSession | undefined;
  const stop = async () => {
    await browser?.close();
    await s?.stop();
    await systemSink?.close();
    await customerSink?.close();
  };
  try {
    systemSink = await startSmtpSink();
    customerSink = await startSmtpSink(SINK_LOGIN);
    const server = await startTestServer({
      clock: systemClock,
      env: {
        SVC_INGRESS_SECRET: INGRESS_SECRET,
        SVC_SMTP_HOST: '127.0.0.1',
        SVC_SMTP_PORT: String(systemSink.port),
        SVC_SMTP_TLS: 'none',
        SVC_SMTP_FROM: 'svc@example.test',
      },
    });
    s = server;
    const seed = await seedWorkspace(server.app, { name: 'Acme' });
    const address = (await seedEmailChannel(server.app, seed, { smtpPort: customerSink.port })).address!;
    const ownerEmail = (await server.app.db.selectFrom('people').select('email').where('id', '=', seed.ownerId).executeTakeFirstOrThrow()).email;
    const session = await launchBrowser();
    browser = session;
    const origin = new URL(server.url).origin;
    return {
      s: server,
      seed,
      address,
      ownerEmail,
      browser: session,
      systemSink,
      customerSink,
      async panelPage(opts = {}) {
        const { context, page } = await session.newPage({
          viewport: { width: opts.width ?? 1280, height: opts.height ?? 800 },
          locale: opts.locale ?? 'en-US',
        });
        const outside: string[] = [];
        page.on('request', (r) => {
          const url = new URL(r.url());
          if (url.origin !== origin && !['data:', 'blob:', 'about:'].includes(url.protocol)) outside.push(r.url());
        });
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(String(e)));
        page.on('console', (m) => m.type() === 'error' && !/Failed to load resource/.test(m.text()) && errors.push(m.text()));
        return { context, page, outside, errors };
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
