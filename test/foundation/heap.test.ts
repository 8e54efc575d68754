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

/** Peak heap size (MB) of batches made after a large plan died, with or without collectDeadHeap in between. */
async function peakHeapAfterPlanMb(collect: boolean): Promise<number> {
  const script = `
    const heap = await import(${JSON.stringify(HEAP_MODULE)});
    heap.keepHeapTight();
    let plan = [];
    for (let i = 0; i < 600_000; i++) plan.push({ key: 'key' + i, at: i, to: 'x' + (i % 1000) });
    plan = null;
    ${collect ? 'heap.collectDeadHeap();' : ''}
    let peak = 0;
    const batches = [];
    for (let b = 0; b < 200; b++) {
      const batch = [];
      for (let j = 0; j < 5000; j++) batch.push({ a: 'x' + j + '-' + b, b: [j, b] });
      batches.push(batch);
      if (batches.length > 4) batches.shift();
      peak = Math.max(peak, process.memoryUsage().heapTotal);
    }
    console.log(peak / 1048576);`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script]);
  return Number(stdout.trim());
}

test('collectDeadHeap: batches made after a large plan died do not fill the heap up to the limit the plan set', async () => {
  const without = await peakHeapAfterPlanMb(false);
  const collected = await peakHeapAfterPlanMb(true);
  assert.ok(collected < without * 0.6, `peak heap ${collected.toFixed(0)} MB after collectDeadHeap vs ${without.toFixed(0)} MB without`);
});

/** The young generation's committed size (MB) after a start that keeps most of what it allocates, then after more of the same. */
async function newSpaceMb(hold: boolean): Promise<{ started: number; later: number }> {
  const script = `
    const v8 = await import('node:v8');
    const heap = await import(${JSON.stringify(HEAP_MODULE)});
    const newSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576;
    ${hold ? 'heap.holdYoungGeneration();' : ''}
    const kept = [];
    const survive = () => { for (let i = 0; i < 400_000; i++) kept.push({ a: 'x' + i, b: [i] }); };
    survive();
    const started = newSpace();
    heap.releaseYoungGeneration();
    survive();
    console.log(JSON.stringify({ started, later: newSpace() }));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script]);
  return JSON.parse(stdout.trim());
}

test('holdYoungGeneration: a start that keeps what it allocates leaves the young generation small; released, it grows again', async () => {
  const held = await newSpaceMb(true);
  const free = await newSpaceMb(false);
  assert.ok(held.started < free.started / 2, `new space ${held.started} MB held vs ${free.started} MB not held`);
  assert.ok(held.later > held.started, `released, it grows: ${held.started} -> ${held.later} MB`);
});

test('afterYoungGenerationHold: a worker thread waits for the release, since a new isolate would undo the hold', async () => {
  const script = `
    const v8 = await import('node:v8');
    const { Worker } = await import('node:worker_threads');
    const heap = await import(${JSON.stringify(HEAP_MODULE)});
    const newSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576;
    const kept = [];
    const survive = () => { for (let i = 0; i < 400_000; i++) kept.push({ a: 'x' + i, b: [i] }); };
    const workerStarted = () => new Promise((resolve) => { const w = new Worker('1', { eval: true }); w.once('exit', resolve); });
    heap.holdYoungGeneration();
    let ran = false;
    const deferred = new Promise((resolve) => heap.afterYoungGenerationHold(() => { ran = true; resolve(); }));
    const ranWhileHeld = ran;
    ${'/* a worker started while held lets the young generation grow */'}
    await workerStarted();
    survive();
    const grewAfterWorker = newSpace();
    heap.releaseYoungGeneration();
    await deferred;
    console.log(JSON.stringify({ ranWhileHeld, ran, grewAfterWorker }));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script]);
  const r = JSON.parse(stdout.trim());
  assert.equal(r.ranWhileHeld, false);
  assert.equal(r.ran, true);
  assert.ok(r.grewAfterWorker > 4, `a worker started while held undoes the hold (new space ${r.grewAfterWorker} MB)`);
});
