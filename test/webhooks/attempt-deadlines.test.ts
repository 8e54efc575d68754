// The dispatcher's shared deadline timer (AttemptDeadlines): on the system clock one timer serves
// every attempt's deadline. The delivery tests run on a ManualClock, so this path is tested here
// with short deadlines and real time.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent } from 'undici';
import { systemClock } from '../../src/platform/clock.js';
import { AttemptDeadlines, attemptTarget, sendAttempt } from '../../src/webhooks/attempt.js';

async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

describe('attempt deadlines on the system clock', () => {
  // Timers never run early but may run any amount late on a loaded machine: the tests wait for what
  // must happen (with a generous limit) and check that nothing ran before its time or after it was cleared.
  test('each deadline runs out once, in the order set, never before its time, never after it was cleared', async () => {
    const ms = 100;
    const deadlines = new AttemptDeadlines(ms);
    const fired: string[] = [];
    const early: string[] = [];
    const entries = new Map<string, { clear(): void }>();
    const set = (name: string, also?: () => void) => {
      const due = performance.now() + ms;
      entries.set(
        name,
        deadlines.add(() => {
          if (performance.now() < due) early.push(name);
          fired.push(name);
          also?.();
        }),
      );
    };
    // When a runs out, c (set after it, not yet due) is cleared, and a itself again (a no-op).
    set('a', () => {
      entries.get('a')!.clear();
      entries.get('c')!.clear();
    });
    // Set later than a (a short busy wait: no timer can run in between, so a is still pending).
    const later = performance.now() + 5;
    while (performance.now() < later);
    set('b');
    set('c');
    set('d');
    entries.get('b')!.clear();
    assert.equal(deadlines.pending, 3);
    await until(() => fired.length === 2, 'a and d to run out');
    assert.deepEqual(fired, ['a', 'd']);
    assert.deepEqual(early, [], 'none ran out before its time');
    assert.equal(deadlines.pending, 0);
    await sleep(2 * ms);
    assert.deepEqual(fired, ['a', 'd'], 'each runs out once');
  });

  test('many deadlines cleared out of order: none fires, and the queue empties', async () => {
    const deadlines = new AttemptDeadlines(30);
    let fired = 0;
    const entries = Array.from({ length: 3000 }, () => deadlines.add(() => fired++));
    for (let i = entries.length - 1; i >= 0; i -= 2) entries[i]!.clear();
    for (let i = 0; i < entries.length; i += 2) entries[i]!.clear();
    assert.equal(deadlines.pending, 0);
    await sleep(60);
    assert.equal(fired, 0);
    // A deadline set after the queue emptied still runs out.
    deadlines.add(() => fired++);
    await until(() => fired > 0, 'the deadline set afterwards to run out');
    assert.equal(fired, 1);
  });

  test('an attempt whose receiver never answers ends at its deadline as a timeout', async () => {
    const held: http.ServerResponse[] = [];
    const server = http.createServer((_req, res) => held.push(res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const agent = new Agent();
    try {
      // Long enough for the request to reach the receiver on a loaded machine before the attempt gives up.
      const deadlines = new AttemptDeadlines(1000);
      const started = performance.now();
      const result = await sendAttempt(
        { agent, clock: systemClock, deadlines },
        { target: attemptTarget(`http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`), headers: {}, body: '{}' },
      );
      assert.equal(result.succeeded, false);
      assert.equal(result.statusCode, null);
      assert.match(result.error ?? '', /no complete answer within/);
      assert.ok(performance.now() - started >= 990, 'not before its deadline');
      assert.equal(held.length, 1, 'the request reached the receiver');
      assert.equal(deadlines.pending, 0);
    } finally {
      for (const res of held) res.destroy();
      await agent.destroy();
      await new Promise((r) => server.close(r));
    }
  });
});
