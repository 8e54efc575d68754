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

describe('attempt deadlines on the system clock', () => {
  test('each deadline runs out once, in the order set, never after it was cleared', async () => {
    const deadlines = new AttemptDeadlines(60);
    const fired: string[] = [];
    const a = deadlines.add(() => fired.push('a'));
    await sleep(20);
    const b = deadlines.add(() => fired.push('b'));
    const c = deadlines.add(() => fired.push('c'));
    deadlines.add(() => fired.push('d'));
    b.clear();
    assert.equal(deadlines.pending, 3);
    await sleep(50);
    assert.deepEqual(fired, ['a'], 'only the first is due after 70 ms');
    a.clear(); // clearing one that already ran out changes nothing
    c.clear();
    await sleep(60);
    assert.deepEqual(fired, ['a', 'd']);
    assert.equal(deadlines.pending, 0);
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
    await sleep(60);
    assert.equal(fired, 1);
  });

  test('an attempt whose receiver never answers ends at its deadline as a timeout', async () => {
    const held: http.ServerResponse[] = [];
    const server = http.createServer((_req, res) => held.push(res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const agent = new Agent();
    try {
      const deadlines = new AttemptDeadlines(150);
      const started = performance.now();
      const result = await sendAttempt(
        { agent, clock: systemClock, deadlines },
        { target: attemptTarget(`http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`), headers: {}, body: '{}' },
      );
      assert.equal(result.succeeded, false);
      assert.equal(result.statusCode, null);
      assert.match(result.error ?? '', /no complete answer within/);
      assert.ok(performance.now() - started >= 140, 'not before its deadline');
      assert.equal(held.length, 1, 'the request reached the receiver');
      assert.equal(deadlines.pending, 0);
    } finally {
      for (const res of held) res.destroy();
      await agent.destroy();
      await new Promise((r) => server.close(r));
    }
  });
});
