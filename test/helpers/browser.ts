// The browser-test harness (test/e2e): Debian's chromium driven by playwright-core, never a
// downloaded browser. launchBrowser() takes a machine-wide lock first, so browser tests never run
// at the same time as each other, whichever test files the runner starts in parallel. Helpers for
// a page on the server's own origin, Chromium's virtual WebAuthn authenticator, an axe check that
// fails on serious and critical violations, and screenshots.
//
// Skip browser tests with `{ skip: browserSkipReason() }`: it names what is missing (only chromium
// can be missing; CI installs it, so nothing skips there).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import AxeBuilder from '@axe-core/playwright';
import { type Browser, type BrowserContext, type BrowserContextOptions, type CDPSession, chromium, type Locator, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.SVC_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'];

/** Why browser tests cannot run here, or undefined when they can. */
export function browserSkipReason(executable = CHROMIUM_PATH): string | undefined {
  try {
    fs.accessSync(executable, fs.constants.X_OK);
    return undefined;
  } catch {
    return `chromium not found at ${executable} (install Debian's chromium or set SVC_CHROMIUM)`;
  }
}

// ---- One browser test at a time on this machine ----

export const BROWSER_LOCK = path.join(os.tmpdir(), 'svc-browser-tests.lock');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Waits until this process holds the browser lock (a file holding the holder's pid; a lock left by
 * a process that is gone is taken over). Returns the release function.
 */
export async function acquireBrowserLock(opts: { timeoutMs?: number; lockFile?: string } = {}): Promise<() => void> {
  const file = opts.lockFile ?? BROWSER_LOCK;
  const deadline = Date.now() + (opts.timeoutMs ?? 15 * 60_000);
  for (;;) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(fs.readFileSync(file, 'utf8').trim() || NaN);
      if (Number.isInteger(holder) && holder !== process.pid && !alive(holder)) {
        fs.rmSync(file, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`another browser test holds ${file} (pid ${holder}) for too long`);
      await sleep(200);
    }
  }
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.off('exit', release);
    // Only our own lock: a stale-lock takeover may have replaced it.
    try {
      if (fs.readFileSync(file, 'utf8').trim() === String(process.pid)) fs.rmSync(file, { force: true });
    } catch {
      /* already gone */
    }
  };
  process.on('exit', release);
  return release;
}

// ---- Launching ----

export interface BrowserSession {
  browser: Browser;
  /** A fresh context (its own cookies and storage) with one page. */
  newPage(options?: BrowserContextOptions): Promise<{ context: BrowserContext; page: Page }>;
  close(): Promise<void>;
}

/** Chromium with the project's flags (plus `args`), after taking the browser lock. */
export async function launchBrowser(opts: { args?: string[] } = {}): Promise<BrowserSession> {
  const release = await acquireBrowserLock();
  let browser: Browser;
  try {
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: [...CHROMIUM_FLAGS, ...(opts.args ?? [])], timeout: 60_000 });
  } catch (err) {
    release();
    throw err;
  }
  return {
    browser,
    async newPage(options = {}) {
      const context = await browser.newContext(options);
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      return { context, page };
    },
    async close() {
      try {
        await browser.close();
      } finally {
        release();
      }
    },
  };
}

/** A free TCP port on 127.0.0.1 (for a server that must know its own URL before it listens). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Puts a small HTML document into a page that shows a same-origin URL (any answer of the server,
 * e.g. /v1/version): the page keeps that origin, so fetch() from it is same-origin with cookies and
 * an Origin header of the server. page.setContent would not keep the origin.
 */
export async function openOnOrigin(page: Page, url: string, doc: { title: string; body: string; lang?: string }): Promise<void> {
  const response = await page.goto(url);
  assert.ok(response?.ok(), `could not open ${url}: ${response?.status()}`);
  await page.evaluate(
    ({ title, body, lang }) => {
      document.documentElement.lang = lang;
      document.head.innerHTML = '';
      document.title = title;
      const viewport = document.createElement('meta');
      viewport.name = 'viewport';
      viewport.content = 'width=device-width, initial-scale=1';
      document.head.append(viewport);
      document.body.innerHTML = body;
    },
    { title: doc.title, body: doc.body, lang: doc.lang ?? 'en' },
  );
}

// ---- The panel ----

/** A desktop window in English. */
export const DESKTOP: BrowserContextOptions = { viewport: { width: 1280, height: 800 }, locale: 'en-US' };

/** A phone, 390 wide with touch, in this locale. */
export function phone(locale = 'en-US'): BrowserContextOptions {
  return { viewport: { width: 390, height: 844 }, locale, isMobile: true, hasTouch: true };
}

/**
 * A page in a fresh context, signed in to the panel with a session token (the cookie a sign-in
 * sets); `errors` collects the page's uncaught errors, which a test expects to stay empty.
 */
export async function panelPage(session: BrowserSession, serverUrl: string, sessionToken: string, options: BrowserContextOptions = DESKTOP) {
  const { context, page } = await session.newPage(options);
  await context.addCookies([{ name: 'svc_session', value: sessionToken, url: serverUrl }]);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  return { context, page, errors };
}

// ---- Virtual WebAuthn authenticator ----

/** A credential as Chromium's virtual authenticator reports it (CDP WebAuthn.Credential; binary fields are base64). */
export interface VirtualCredential {
  credentialId: string;
  isResidentCredential: boolean;
  rpId?: string;
  privateKey: string;
  userHandle?: string;
  signCount: number;
  backupEligibility?: boolean;
  backupState?: boolean;
  userName?: string;
  userDisplayName?: string;
}

export interface VirtualAuthenticator {
  id: string;
  cdp: CDPSession;
  credentials(): Promise<VirtualCredential[]>;
  /** Replaces a credential with a copy whose sign counter is `signCount` (a cloned authenticator). */
  setSignCount(credential: VirtualCredential, signCount: number): Promise<void>;
  remove(): Promise<void>;
}

/**
 * Chromium's virtual authenticator (CDP WebAuthn domain) on a page: a platform authenticator with
 * resident keys and user verification that answers without a prompt.
 */
export async function addVirtualAuthenticator(
  page: Page,
  options: { protocol?: 'ctap2' | 'u2f'; transport?: 'internal' | 'usb' | 'nfc' | 'ble'; isUserVerified?: boolean } = {},
): Promise<VirtualAuthenticator> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: options.protocol ?? 'ctap2',
      transport: options.transport ?? 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: options.isUserVerified ?? true,
      automaticPresenceSimulation: true,
    },
  });
  return {
    id: authenticatorId,
    cdp,
    async credentials() {
      return (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials as unknown as VirtualCredential[];
    },
    async setSignCount(credential, signCount) {
      await cdp.send('WebAuthn.removeCredential', { authenticatorId, credentialId: credential.credentialId });
      await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: { ...credential, signCount } });
    },
    async remove() {
      await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId });
    },
  };
}

// ---- Accessibility and screenshots ----

/** Fails when axe finds serious or critical violations on the page (WCAG 2.x A and AA rules and best practices). */
export async function assertAccessible(page: Page, opts: { include?: string; disableRules?: string[] } = {}) {
  let builder = new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice']);
  if (opts.include) builder = builder.include(opts.include);
  if (opts.disableRules?.length) builder = builder.disableRules(opts.disableRules);
  const results = await builder.analyze();
  const blocking = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  if (blocking.length) {
    const lines = blocking.map(
      (v) =>
        `${v.impact} ${v.id}: ${v.help} (${v.nodes
          .slice(0, 3)
          .map((n) => n.target.join(' '))
          .join(', ')})`,
    );
    assert.fail(`axe found ${blocking.length} serious or critical accessibility violation(s) on ${page.url()}:\n${lines.join('\n')}`);
  }
  return results;
}

/** Where screenshots go: $SVC_TEST_ARTIFACTS, or dist/test-artifacts. */
export const ARTIFACTS_DIR = process.env.SVC_TEST_ARTIFACTS ?? path.resolve('dist/test-artifacts');

/** Saves a full-page screenshot as <ARTIFACTS_DIR>/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  const file = artifact(name);
  await page.screenshot({ path: file, fullPage: true });
  // SVC_SCREENSHOT_WIDTHS=1280,390: each screenshot also at those widths (to look at a page in every
  // size a test does not visit; the viewport is put back after).
  const widths = (process.env.SVC_SCREENSHOT_WIDTHS ?? '')
    .split(',')
    .map(Number)
    .filter((w) => w > 0);
  const viewport = page.viewportSize();
  if (widths.length && viewport) {
    for (const width of widths) {
      await page.setViewportSize({ width, height: viewport.height });
      await page.screenshot({ path: file.replace(/\.png$/, `-w${width}.png`), fullPage: true });
    }
    await page.setViewportSize(viewport);
  }
  return file;
}

/** A screenshot of one element (a card, a region), for pages that scroll inside a pane, which a full-page picture would miss. */
export async function screenshotOf(locator: Locator, name: string): Promise<string> {
  const file = artifact(name);
  await locator.screenshot({ path: file });
  return file;
}

function artifact(name: string): string {
  fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
  return path.join(ARTIFACTS_DIR, `${name.replace(/[^A-Za-z0-9._-]+/g, '-')}.png`);
}
