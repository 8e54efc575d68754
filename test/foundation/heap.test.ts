import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);
const HEAP_MODULE = new URL('../../src/platform/heap.js', import.meta.url).href;

/** Peak heap size (MB) of a child that keeps ~100,000 objects alive while it makes many more that die after surviving a while. */
async function peakHeapMb(tight: boolean): Promise<number> {
  const script = `
    ${tight ? `(await import(${JSON.stringify(HEAP_MODULE)})).keepHeapTight();` : ''}
    const live = [];
    let peak = 0;
    for (let i = 0; i < 1_200_000; i++) {
      live.push({ a: 'x' + i, b: [i, i + 1], c: { d: i } });
      if (live.length > 200_000) live.splice(0, 100_000);
      if (i % 10_000 === 0) peak = Math.max(peak, process.memoryUsage().heapTotal);
    }
    console.log(peak / 1048576);`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script]);
  return Number(stdout.trim());
}

test('keepHeapTight: old space grows much less past what the last full GC kept', async () => {
  const loose = await peakHeapMb(false);
  const tight = await peakHeapMb(true);
  assert.ok(tight < loose * 0.8, `peak heap ${tight.toFixed(0)} MB with keepHeapTight vs ${loose.toFixed(0)} MB without`);
});
