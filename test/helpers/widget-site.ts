// What the chat widget's browser tests (test/e2e/widget-chat, widget-agent, widget-host-page) start
// from, one per test file: a real server, the workspace "Acme" with three chat channels (plain with
// a greeting, one that asks for an e-mail address when nobody is online, one in a Turkish inbox),
// and a host site on another loopback origin (http://shop.test:<port>, and http://evil.test:<port>
// which no channel allows, both mapped to 127.0.0.1 with --host-resolver-rules) whose pages have a
// strict CSP: script-src and connect-src name only svc, no 'unsafe-inline' anywhere.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { createChatChannel } from '../../src/channels/service.js';
import { createInbox } from '../../src/inboxes/service.js';
import { systemClock } from '../../src/platform/clock.js';
import { type BrowserSession, launchBrowser } from './browser.js';
import { type Seed, seedWorkspace } from './fixtures.js';
import { startTestServer, type TestServer } from './server.js';

const HOSTILE_CSS = `button{all:unset!important} *{font-family:serif!important;color:red!important;box-sizing:content-box!important;line-height:3!important}
div,section,p{display:inline!important;margin:40px!important;padding:30px!important} svc-chat{display:none}`;

export interface HostPage {
  key: string;
  /** Links the hostile style sheet. */
  css?: boolean;
  /** connect-src names svc for https only (no ws:): the widget falls back to fetching. */
  httpOnly?: boolean;
  /** A same-origin script that calls svc('identify', …) (the page's CSP then also allows 'self'). */
  identify?: Record<string, string>;
  /** img-src also allows blob: (the widget shows image attachments through blob: URLs). */
  images?: boolean;
}

export interface VisitOptions {
  origin?: string;
  width?: number;
  height?: number;
  beforeLoad?: (p: Page) => Promise<void>;
}

export interface WidgetScene {
  s: TestServer;
  seed: Seed;
  browser: BrowserSession;
  /** The host site's allowed origin, and one that is not allowed. */
  shop: string;
  evil: string;
  keys: Record<'plain' | 'offline' | 'turkish', string>;
  /** The Support inbox's identity secret (identity hashes). */
  inboxSecret: string;
  /**
   * Opens the host site's page `name` showing `page`'s widget in a fresh context; `problems` collects
   * page errors, answers of 400 and above, console errors and CSP or widget messages.
   */
  visit(name: string, page: HostPage, opts?: VisitOptions): Promise<{ context: BrowserContext; page: Page; problems: string[] }>;
  /** The newest conversation of the workspace created after `since` (waits for it). */
  conversationOf(contactName: RegExp | null, since: string): Promise<{ id: string; contact_id: string }>;
  /** Waits until the server counts as many open team connections as asked (the widget's presence reads them). */
  teamConnections(open: boolean): Promise<void>;
  stop(): Promise<void>;
}

/** The widget's launcher button on a host page. */
export const launcher = (page: Page): Locator => page.locator('svc-chat').getByRole('button', { name: /Open chat|Close chat|Sohbeti/ });

export async function startWidgetScene(): Promise<WidgetScene> {
  let s: TestServer | undefined;
  let browser: BrowserSession | undefined;
  let host: http.Server | undefined;
  const pages = new Map<string, HostPage>();
  const stop = async () => {
    await browser?.close();
    await s?.stop();
    await new Promise((r) => (host ? host.close(r) : r(undefined)));
  };
  try {
    const server = await startTestServer({ clock: systemClock });
    s = server;
    const seed = await seedWorkspace(server.app, { name: 'Acme' });
    host = http.createServer((req, res) => serveHost(server, pages, req, res));
    await new Promise<void>((r) => host!.listen(0, '127.0.0.1', r));
    const port = (host.address() as AddressInfo).port;
    const shop = `http://shop.test:${port}`;
    const evil = `http://evil.test:${port}`;
    const chat = async (opts: { inboxId?: string; name: string; askEmailOffline: boolean; greeting?: string }) =>
      (
        await createChatChannel(server.app, {
          workspaceId: seed.workspaceId,
          inboxId: opts.inboxId ?? seed.inboxId,
          name: opts.name,
          origins: [shop],
          allowAnonymous: true,
          askEmailOffline: opts.askEmailOffline,
          ...(opts.greeting ? { greeting: opts.greeting } : {}),
        })
      ).public_key!;
    const keys = {
      plain: await chat({ name: 'Chat', askEmailOffline: false, greeting: 'Hi! How can we help?' }),
      offline: await chat({ name: 'Chat offline', askEmailOffline: true }),
      turkish: '',
    };
    const turkish = await createInbox(server.app, { workspaceId: seed.workspaceId, name: 'Destek', locale: 'tr', mode: 'async', expectedReplyMinutes: 120 });
    keys.turkish = await chat({ inboxId: turkish.id, name: 'Sohbet', askEmailOffline: false });
    const inbox = await server.app.db.selectFrom('inboxes').select('identity_secret_sealed').where('id', '=', seed.inboxId).executeTakeFirstOrThrow();
    const inboxSecret = server.app.sealer.open(inbox.identity_secret_sealed);
    const session = await launchBrowser({ args: ['--host-resolver-rules=MAP shop.test 127.0.0.1, MAP evil.test 127.0.0.1'] });
    browser = session;
    return {
      s: server,
      seed,
      browser: session,
      shop,
      evil,
      keys,
      inboxSecret,
      async visit(name, page, opts = {}) {
        pages.set(name, page);
        const { context, page: p } = await session.newPage({ viewport: { width: opts.width ?? 1280, height: opts.height ?? 800 } });
        const problems: string[] = [];
        p.on('pageerror', (e) => problems.push(String(e)));
        p.on('response', (r) => r.status() >= 400 && problems.push(`${r.status()} ${r.url()}`));
        p.on('console', (m) => {
          if (m.type() === 'error' || /Content Security Policy|svc widget/.test(m.text())) problems.push(m.text());
        });
        await opts.beforeLoad?.(p);
        await p.goto(`${opts.origin ?? shop}/${name}`);
        return { context, page: p, problems };
      },
      async conversationOf(contactName, since) {
        for (let i = 0; i < 100; i++) {
          const row = await server.app.db
            .selectFrom('conversations')
            .select(['id', 'contact_id'])
            .where('workspace_id', '=', seed.workspaceId)
            .where('created_at', '>', since)
            .orderBy('created_at', 'desc')
            .executeTakeFirst();
          if (row) return row;
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.fail(`no conversation created (${contactName})`);
      },
      async teamConnections(open) {
        for (let i = 0; i < 200; i++) {
          const row = await server.app.db
            .selectFrom('realtime_connections')
            .select('id')
            .where('workspace_id', '=', seed.workspaceId)
            .where('kind', '=', 'member')
            .where('closed_at', 'is', null)
            .executeTakeFirst();
          if ((row !== undefined) === open) return;
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.fail(open ? 'no team member came online' : 'a team member stayed online');
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

function serveHost(s: TestServer, pages: Map<string, HostPage>, req: http.IncomingMessage, res: http.ServerResponse) {
  const url = new URL(req.url ?? '/', 'http://host');
  const svc = new URL(s.url).origin;
  if (url.pathname === '/favicon.ico') return void res.writeHead(204).end();
  if (url.pathname === '/host.css') return void res.writeHead(200, { 'content-type': 'text/css' }).end(HOSTILE_CSS);
  const page = pages.get(url.pathname.slice(1));
  if (url.pathname === '/identify.js' || url.pathname.endsWith('/identify.js')) {
    const p = pages.get(url.searchParams.get('page') ?? '');
    return void res
      .writeHead(200, { 'content-type': 'text/javascript' })
      .end(`window.svc=window.svc||function(){(svc.q=svc.q||[]).push(arguments)};svc('identify',${JSON.stringify(p?.identify ?? {})});`);
  }
  if (!page) return void res.writeHead(404).end('not found');
  const scriptSrc = page.identify ? `'self' ${svc}` : svc;
  const connectSrc = page.httpOnly ? svc : `${svc} ${svc.replace(/^http/, 'ws')}`;
  res.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': `default-src 'none'; script-src ${scriptSrc}; connect-src ${connectSrc}; style-src 'self'; img-src 'self'${page.images ? ' blob:' : ''}`,
  });
  res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Shop</title>
${page.css ? '<link rel="stylesheet" href="/host.css">' : ''}
${page.identify ? `<script src="/identify.js?page=${url.pathname.slice(1)}"></script>` : ''}
</head><body><main><h1>The shop</h1><p>Things to buy.</p><button type="button">Buy</button></main>
<script src="${svc}/widget.js" data-key="${page.key}" async></script></body></html>`);
}
