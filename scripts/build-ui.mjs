// Builds the panel and the chat widget: the OpenAPI document of the compiled server → typed client → type check → Vite.
// Runs after `tsc` (npm run build); a route change that breaks the panel fails here.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
// The `svc` bin (`npx svc`, package.json "bin"): tsc writes it without the executable bit.
fs.chmodSync(path.join(root, 'dist', 'src', 'main.js'), 0o755);
const generated = path.join(root, 'ui', 'generated');
fs.mkdirSync(generated, { recursive: true });

// The document is what a running server answers at /v1/openapi.json, asked in-process from a
// throwaway data directory (no listener, no migrations: building the routes touches no table).
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-openapi-'));
try {
  const env = {
    SVC_DATA_DIR: dataDir,
    SVC_MASTER_KEY: crypto.randomBytes(32).toString('hex'),
    SVC_METRICS_ADDR: 'off',
    SVC_PUBLIC_URL: 'http://localhost:8080',
  };
  const { loadConfig } = await import(pathToFileURL(path.join(root, 'dist/src/config.js')).href);
  const { buildServices } = await import(pathToFileURL(path.join(root, 'dist/src/context.js')).href);
  const { createServerApp } = await import(pathToFileURL(path.join(root, 'dist/src/server/routes.js')).href);
  const services = buildServices(loadConfig(env), { log: silentLog() });
  try {
    const res = await createServerApp(services).request('/v1/openapi.json');
    if (res.status !== 200) throw new Error(`/v1/openapi.json answered ${res.status}`);
    fs.writeFileSync(path.join(generated, 'openapi.json'), JSON.stringify(await res.json(), null, 1));
  } finally {
    await services.close();
  }
} finally {
  fs.rmSync(dataDir, { recursive: true, force: true });
}

run('openapi-typescript', [path.join(generated, 'openapi.json'), '--output', path.join(generated, 'api.d.ts'), '--silent']);
run('tsc', ['-p', path.join(root, 'ui', 'tsconfig.json')]);
run('vite', ['build', '--config', path.join(root, 'ui', 'vite.config.ts'), '--logLevel', 'warn']);
run('vite', ['build', '--config', path.join(root, 'ui', 'widget.vite.config.ts'), '--logLevel', 'warn']);
writeWidgetLoader(path.join(root, 'dist', 'ui', 'widget'));

/**
 * /widget.js: a classic script (what `<script async src>` runs) small enough to serve with a short
 * cache. It queues `svc(…)` calls and imports the hashed entry, which is cached for good; a new
 * build changes only the name the loader imports.
 */
function writeWidgetLoader(dir) {
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  const entry = Object.values(manifest).find((chunk) => chunk.isEntry);
  if (!entry) throw new Error('the widget build has no entry');
  const name = path.basename(entry.file);
  const loader = `(function(){var s=document.currentScript;if(!s||!s.src)return;var w=window;w.svc=w.svc||function(){(w.svc.q=w.svc.q||[]).push([].slice.call(arguments))};import(new URL(${JSON.stringify(`widget/assets/${name}`)},s.src).href).then(function(m){return m.start(s)})["catch"](function(e){console.warn("svc widget: "+e)})})();\n`;
  fs.writeFileSync(path.join(dir, 'widget.js'), loader);
}

function run(bin, args) {
  const r = spawnSync(path.join(root, 'node_modules', '.bin', bin), args, { stdio: 'inherit', cwd: root });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

function silentLog() {
  const noop = () => {};
  const log = { debug: noop, info: noop, warn: noop, error: noop, child: () => log };
  return log;
}
