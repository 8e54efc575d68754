// How committed events wake the webhook dispatcher: a burst of commits (inbound mail, one announcement
// per group-commit flush) is one claim per window, not one per commit.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { announceEvents } from '../../src/events/service.js';
import { createMetrics } from '../../src/platform/metrics.js';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const HOUR_MS = 3_600_000;

describe('webhook dispatcher wake-ups', () => {
  let s: TestServer;

  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  test('the first committed event after a quiet spell is looked for at once; a burst after it within the window adds no claim', async () => {
    // A window (and poll) of an hour: within the test only the first announcement can look.
    const dispatcher = new WebhookDispatcher({ ...s.app, metrics: createMetrics() }, { pollMs: HOUR_MS, eventsWakeWindowMs: HOUR_MS });
    // Each claim of scheduled deliveries the dispatcher makes (its private claim(), the same on both
    // databases). Claims for redeliveries are not counted: one follows the first look after start,
    // and on a loaded machine it may come later than the test's settling sleep.
    let claimed = 0;
    const spied = dispatcher as unknown as { claim: (limit: number, busy: string[], manual: boolean) => Promise<unknown> };
    const claim = spied.claim.bind(dispatcher);
    spied.claim = (limit, busy, manual) => {
      if (!manual) claimed++;
      return claim(limit, busy, manual);
    };
    const claims = () => claimed;
    await dispatcher.start();
    try {
      for (let i = 0; i < 200 && claims() === 0; i++) await sleep(10);
      await sleep(50);
      const atStart = claims();
      assert.ok(atStart > 0, 'looked when started');

      announceEvents(s.app);
      for (let i = 0; i < 200 && claims() === atStart; i++) await sleep(10);
      await sleep(50);
      assert.equal(claims(), atStart + 1, 'one look for the first announcement');

      // Twenty flushes' announcements, each on a turn of its own and further apart than the dispatcher's own 5 ms coalescing.
      for (let i = 0; i < 20; i++) {
        announceEvents(s.app);
        await sleep(10);
      }
      await sleep(50);
      assert.equal(claims(), atStart + 1, 'no claim before the window ends');
    } finally {
      await dispatcher.stop();
    }
  });
});
