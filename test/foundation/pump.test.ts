import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Pump } from '../../src/platform/pump.js';

/** Passes that wait until the test lets them finish, so calls can land while one runs. */
function gatedPasses() {
  const waiting: (() => void)[] = [];
  let started = 0;
  let running = 0;
  let overlapped = false;
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return {
    pass: () => {
      started++;
      if (++running > 1) overlapped = true;
      return new Promise<void>((resolve) => waiting.push(() => (running--, resolve())));
    },
    started: () => started,
    overlapped: () => overlapped,
    async finishNext() {
      const finish = waiting.shift();
      assert.ok(finish, 'a pass is running');
      finish();
      await settle();
    },
    settle,
  };
}

describe('platform pump: one coalescing work loop', () => {
  test('calls during a pass make exactly one more pass, never a parallel one', async () => {
    const g = gatedPasses();
    const pump = new Pump(g.pass, { active: () => true, onError: (error) => assert.fail(String(error)) });
    pump.run();
    await g.settle();
    assert.equal(g.started(), 1);
    pump.run();
    pump.run();
    pump.run();
    await g.settle();
    assert.equal(g.started(), 1, 'no second pass while the first runs');
    await g.finishNext();
    assert.equal(g.started(), 2, 'the wake-ups during the first pass make one more');
    await g.finishNext();
    assert.equal(g.started(), 2, 'and only one');
    assert.equal(g.overlapped(), false);
    pump.run();
    await g.settle();
    assert.equal(g.started(), 3, 'an idle pump starts at once');
    await g.finishNext();
  });

  test('an inactive owner starts nothing and ends the repeat; a failed pass is reported and the next run works', async () => {
    let active = true;
    const errors: unknown[] = [];
    const g = gatedPasses();
    const pump = new Pump(g.pass, { active: () => active, onError: (error) => errors.push(error) });
    pump.run();
    await g.settle();
    pump.run();
    active = false;
    await g.finishNext();
    assert.equal(g.started(), 1, 'stopped during the pass: no pass follows');
    pump.run();
    await g.settle();
    assert.equal(g.started(), 1, 'stopped: run() does nothing');

    let fail = true;
    const passes: string[] = [];
    const failing = new Pump(
      async () => {
        passes.push(fail ? 'failed' : 'ok');
        if (fail) throw new Error('database gone');
      },
      { active: () => true, onError: (error) => errors.push(error) },
    );
    failing.run();
    await g.settle();
    assert.equal((errors[0] as Error).message, 'database gone');
    fail = false;
    failing.run();
    await g.settle();
    assert.deepEqual(passes, ['failed', 'ok']);
  });
});
