// The embeddable chat widget: /widget.js (the loader a site's <script> tag names; a short cache, so
// a new build reaches sites within minutes) and /widget/assets/<name> (hashed modules, cached for
// good). The modules are fetched cross-origin as ES modules, so they carry CORS and CORP headers.
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { errorBody } from '../http/errors.js';

const WIDGET_DIR = fileURLToPath(new URL('../../ui/widget/', import.meta.url));
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,200}\.js$/;
export const LOADER_MAX_AGE_SECONDS = 300;

const SCRIPT_HEADERS = {
  'content-type': 'text/javascript; charset=utf-8',
  'x-content-type-options': 'nosniff',
  'access-control-allow-origin': '*',
  'cross-origin-resource-policy': 'cross-origin',
};

export function registerWidgetScriptRoutes(app: ApiApp, _ctx: Ctx) {
  const files = new Map<string, Buffer>();
  async function read(relative: string): Promise<Buffer | undefined> {
    let body = files.get(relative);
    if (!body) {
      try {
        body = await fs.readFile(path.join(WIDGET_DIR, relative));
      } catch {
        return undefined;
      }
      files.set(relative, body);
    }
    return body;
  }

  app.get('/widget.js', async (c) => {
    const body = await read('widget.js');
    if (!body) return c.json(errorBody('not_built', 'the widget is not built: run "npm run build"'), 503, { 'cache-control': 'no-store' });
    return c.body(new Uint8Array(body), 200, { ...SCRIPT_HEADERS, 'cache-control': `public, max-age=${LOADER_MAX_AGE_SECONDS}` });
  });

  app.get('/widget/assets/:name', async (c) => {
    const name = c.req.param('name');
    const body = ASSET_NAME.test(name) ? await read(path.join('assets', name)) : undefined;
    if (!body) return c.json(errorBody('not_found', 'no such widget file'), 404);
    return c.body(new Uint8Array(body), 200, { ...SCRIPT_HEADERS, 'cache-control': 'public, max-age=31536000, immutable' });
  });
}
