// The panel: the built single-page app (dist/ui/panel) served by the API's own listener. Hashed
// assets are immutable; every other GET that is not an API or server path answers index.html, so
// panel URLs (/conversations/{id}, /settings/…) survive a reload.
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context } from 'hono';
import type { Ctx } from '../context.js';
import type { ApiApp, AppEnv } from '../http/app.js';
import { errorBody } from '../http/errors.js';

const PANEL_DIR = fileURLToPath(new URL('../../ui/panel/', import.meta.url));

/** Paths the panel never answers: they belong to the API and the server. */
const SERVER_PATH = /^\/(v1|healthz|readyz|metrics|widget)(\/|$|\.)/;
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,200}$/;

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};

/**
 * No inline scripts or styles, nothing from elsewhere; the page may not be framed. `frame-src blob:`
 * is for the sandboxed frame that shows sanitized HTML mail; `img-src` allows attachments (same
 * origin) and generated previews (blob:, data:).
 */
export const PANEL_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "frame-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const HTML_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-cache',
  'content-security-policy': PANEL_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
};

export function registerPanelRoutes(app: ApiApp, _ctx: Ctx) {
  const assets = new Map<string, Buffer>();
  let indexHtml: Buffer | null = null;

  app.get('/assets/:name', async (c) => {
    const name = c.req.param('name');
    const type = CONTENT_TYPES[path.extname(name)];
    if (!ASSET_NAME.test(name) || !type) return c.json(errorBody('not_found', 'no such asset'), 404);
    let body = assets.get(name);
    if (!body) {
      try {
        body = await fs.readFile(path.join(PANEL_DIR, 'assets', name));
      } catch {
        return c.json(errorBody('not_found', 'no such asset'), 404);
      }
      assets.set(name, body);
    }
    return c.body(new Uint8Array(body), 200, {
      'content-type': type,
      'cache-control': 'public, max-age=31536000, immutable',
      'x-content-type-options': 'nosniff',
    });
  });

  // The service worker (Web Push notifications): not hashed, so that browsers find it again.
  let serviceWorker: Buffer | null = null;
  app.get('/sw.js', async (c) => {
    try {
      serviceWorker ??= await fs.readFile(path.join(PANEL_DIR, 'sw.js'));
    } catch {
      return c.json(errorBody('not_found', 'the panel is not built'), 404);
    }
    return c.body(new Uint8Array(serviceWorker), 200, {
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
    });
  });

  // The web app manifest and its icons (installing the panel as an app): not hashed, found by name.
  const files = new Map<string, Buffer>();
  const publicFile = (name: string, type: string, cache: string) => async (c: Context<AppEnv>) => {
    let body = files.get(name);
    if (!body) {
      try {
        body = await fs.readFile(path.join(PANEL_DIR, name));
      } catch {
        return c.json(errorBody('not_found', 'the panel is not built'), 404);
      }
      files.set(name, body);
    }
    return c.body(new Uint8Array(body), 200, { 'content-type': type, 'cache-control': cache, 'x-content-type-options': 'nosniff' });
  };
  app.get('/manifest.webmanifest', publicFile('manifest.webmanifest', 'application/manifest+json; charset=utf-8', 'no-cache'));
  for (const icon of ['icon-192.png', 'icon-512.png', 'maskable-512.png'])
    app.get(`/icons/${icon}`, publicFile(`icons/${icon}`, 'image/png', 'public, max-age=86400'));

  app.get('*', async (c: Context<AppEnv>, next) => {
    if (SERVER_PATH.test(c.req.path)) return next();
    if (!indexHtml) {
      try {
        indexHtml = await fs.readFile(path.join(PANEL_DIR, 'index.html'));
      } catch {
        return c.text('The panel is not built: run "npm run build".\n', 503, { 'cache-control': 'no-store' });
      }
    }
    return c.body(new Uint8Array(indexHtml), 200, HTML_HEADERS);
  });
}
