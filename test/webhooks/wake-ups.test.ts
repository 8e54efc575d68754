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
    // Each look for work the dispatcher makes (its private fill(): the outbox, due deliveries,
    // redeliveries; the same on both databases).
    let claimed = 0;
    const spied = dispatcher as unknown as { fill: () => Promise<number> };
    const fill = spied.fill.bind(dispatcher);
    spied.fill = () => {
      claimed++;
      return fill();
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

  test('a look the outbox supplies claims no due deliveries: only a poll, an expansion that left some due, or a retry written here coming due does', async () => {
    const dispatcher = new WebhookDispatcher({ ...s.app, metrics: createMetrics() }, { pollMs: HOUR_MS, eventsWakeWindowMs: 1 });
    let looks = 0;
    let dueClaims = 0;
    const spied = dispatcher as unknown as { fill: () => Promise<number>; claim: (limit: number, busy: string[], manual: boolean) => Promise<unknown> };
    const fill = spied.fill.bind(dispatcher);
    spied.fill = () => {
      looks++;
      return fill();
    };
    const claim = spied.claim.bind(dispatcher);
    spied.claim = (limit, busy, manual) => {
      if (!manual) dueClaims++;
      return claim(limit, busy, manual);
    };
    await dispatcher.start();
    try {
      for (let i = 0; i < 500 && dueClaims === 0; i++) await sleep(10);
      assert.equal(dueClaims, 1, 'the first look after start claims due deliveries');
      const looksBefore = looks;
      for (let i = 0; i < 5; i++) {
        announceEvents(s.app);
        for (let j = 0; j < 500 && looks === looksBefore + i; j++) await sleep(10);
        await sleep(20);
      }
      assert.ok(looks >= looksBefore + 5, `${looks - looksBefore} looks for five announcements`);
      assert.equal(dueClaims, 1, 'announced events are taken from the outbox without a claim of due deliveries');
      await dispatcher.drain();
      assert.equal(dueClaims, 2, 'a drain looks at due deliveries again');
    } finally {
      await dispatcher.stop();
    }
  });
});
