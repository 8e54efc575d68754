// What a site loads of the widget before the visitor opens the chat (the test's budget and bench/widget).
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';

/** What may load before the visitor opens the chat, gzip-compressed. */
export const INITIAL_LOAD_BUDGET_BYTES = 12 * 1024;

/** The loader and every module the entry imports statically (dynamic imports load on open). */
export async function initialLoad(base: string): Promise<{ files: Map<string, Buffer>; gzipBytes: number; lazy: string[] }> {
  const files = new Map<string, Buffer>();
  const lazy = new Set<string>();
  const loader = Buffer.from(await (await fetch(`${base}/widget.js`)).arrayBuffer());
  files.set('/widget.js', loader);
  const entry = /import\(new URL\("([^"]+)"/.exec(loader.toString())?.[1];
  assert.ok(entry, 'the loader imports the hashed entry');
  const queue = [`/${entry}`];
  while (queue.length) {
    const path = queue.shift()!;
    if (files.has(path)) continue;
    const res = await fetch(`${base}${path}`);
    assert.equal(res.status, 200, path);
    const text = await res.text();
    files.set(path, Buffer.from(text));
    const dir = path.slice(0, path.lastIndexOf('/') + 1);
    for (const m of text.matchAll(/(?:^|[;}\s])(?:import|export)\s*(?:[\w$*{}\s,]*?from\s*)?["'`](\.\/[^"'`]+)["'`]/g)) queue.push(dir + m[1].slice(2));
    for (const m of text.matchAll(/import\(\s*["'`](\.\/[^"'`]+)["'`]\s*\)/g)) lazy.add(dir + m[1].slice(2));
  }
  const gzipBytes = [...files.values()].reduce((sum, b) => sum + gzipSync(b, { level: 9 }).length, 0);
  return { files, gzipBytes, lazy: [...lazy].filter((p) => !files.has(p)) };
}
