import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import { WakeWindow } from '../../src/platform/wake-window.js';

test('wake window: the first wake-up looks on the next turn, those within the window after a look are one look at its end', (t) => {
  mock.timers.enable({ apis: ['setTimeout'] });
  t.after(() => mock.timers.reset());
  let now = 1_000;
  const advance = (ms: number) => {
    now += ms;
    mock.timers.tick(ms);
  };
  let looks = 0;
  const w = new WakeWindow(
    () => looks++,
    20,
    () => now,
  );

  w.wake();
  w.wake();
  assert.equal(looks, 0, 'not inside the caller');
  advance(0);
  assert.equal(looks, 1, 'at once, both wake-ups as one');

  advance(5);
  for (let i = 0; i < 10; i++) {
    w.wake();
    advance(1);
  }
  assert.equal(looks, 1, 'within the window: waiting');
  advance(5);
  assert.equal(looks, 2, 'one look at the end of the window (20 ms after the last)');

  advance(100);
  w.wake();
  advance(0);
  assert.equal(looks, 3, 'after a quiet spell: at once again');

  w.wake();
  w.cancel();
  advance(50);
  assert.equal(looks, 3, 'cancelled');
});
