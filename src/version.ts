import fs from 'node:fs';

let cached: string | undefined;

/** The running version, from package.json (dist/src/version.js → ../../package.json). */
export function readVersion(): string {
  cached ??= (JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  return cached;
}
