import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createProperty } from '../../src/analytics/properties.js';
import { EventWriter, type PendingEvent } from '../../src/analytics/writer.js';
import type { ManualClock } from '../../src/platform/clock.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/lifecycle.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// On SQLite the event buffer's batches are written on a thread with its own connection
// (src/analytics/writer-thread.ts); on Postgres from the event loop, as before.
describe('analytics: the event buffer’s writer thread', () => {
  let s: TestServer;
  let pid: string;
  let wid: string;
  const sqlite = () => s.app.dialect === 'sqlite';

  before(async () => {
    s = await startTestServer();
    await s.app.jobs.stop();
    (s.clock as ManualClock).set('2026-08-03T09:00:00Z');
    wid = (await seedWorkspace(s.app)).workspaceId;
    pid = (await createProperty(s.app, { workspaceId: wid, domain: 'thread.example' })).id;
  });
  after(() => s.stop());

  const event = (i: number, over: Partial<PendingEvent> = {}): PendingEvent => ({
    property_id: pid,
    workspace_id: wid,
    at: new Date(Date.parse('2026-08-03T09:00:00Z') + i).toISOString(),
    day: '2026-08-03',
    name: 'pageview',
    visitor_id: `visitor-${i % 300}`,
    path: `/p/${i % 40}`,
    referrer: null,
    source: null,
    utm_source: null,
    utm_medium: null,
    utm_campaign: null,
    utm_content: null,
    utm_term: null,
    country: null,
    region: null,
    city: null,
    browser: 'Chrome',
    os: 'Linux',
    device: 'desktop',
    props: null,
    ...over,
  });
  const written = async () =>
    Number(
      (
        await s.app.db
          .selectFrom('analytics_events')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('property_id', '=', pid)
          .executeTakeFirstOrThrow()
      ).n,
    );

  test('batches are written on the thread while the event loop goes on answering', async () => {
    const writer = new EventWriter(s.app, { maxWaiting: 50_000 });
    const before = await written();
    for (let i = 0; i < 20_000; i++) writer.add(event(i));
    let done = false;
    const flushed = writer.flush().then(() => (done = true));
    const answer = await s.request('GET', '/healthz');
    assert.equal(answer.status, 200);
    // 20,000 events take the thread far longer than an answer takes the event loop; written from
    // the event loop, the answer would come after the last batch.
    if (sqlite()) assert.equal(done, false, 'the answer came while batches were still being written');
    assert.equal(writer.threadRunning, sqlite());
    await flushed;
    assert.equal((await written()) - before, 20_000);
    await writer.close();
    assert.equal(writer.threadRunning, false);
  });

  test('events added while a batch is written wait in one run behind it, not in one run each', async () => {
    const writer = new EventWriter(s.app, { maxWaiting: 50_000, flushMs: 60_000 });
    const before = await written();
    for (let i = 0; i < 600; i++) writer.add(event(100_000 + i));
    await new Promise((resolve) => setImmediate(resolve)); // the first batch's write is under way
    // Each add past 500 asks for a flush. Before, each of those queued a run of its own behind the
    // write: under sustained load on Postgres, a chain of waiting promises that grew without end.
    const runs = new Set<Promise<void>>();
    for (let i = 0; i < 2_000; i++) {
      writer.add(event(200_000 + i));
      runs.add(writer.flush());
    }
    assert.equal(runs.size, 1);
    await Promise.all(runs);
    assert.equal((await written()) - before, 2_600);
    await writer.close();
  });

  test('a batch that fails changes nothing and says why', async () => {
    const writer = new EventWriter(s.app);
    const before = await written();
    for (let i = 0; i < 10; i++) writer.add(event(i));
    writer.add(event(10, { name: null as unknown as string }));
    await assert.rejects(writer.flush(), (e: Error & { code?: string }) => /not null|null value/i.test(e.message));
    assert.equal(await written(), before, 'the batch is one transaction');
    writer.add(event(11));
    await writer.flush();
    assert.equal(await written(), before + 1, 'the next batch is written');
    await writer.close();
  });

  test('the thread ends when idle and starts again with the next batch; closing writes what waits', async () => {
    const writer = new EventWriter(s.app, { threadIdleMs: 200, flushMs: 60_000 });
    const before = await written();
    writer.add(event(1));
    await writer.flush();
    assert.equal(writer.threadRunning, sqlite());
    await waitUntil(() => !writer.threadRunning, 15_000, 'the idle thread ends');
    writer.add(event(2));
    await writer.flush();
    assert.equal(writer.threadRunning, sqlite());
    writer.add(event(3));
    writer.add(event(4));
    await writer.close();
    assert.equal(await written(), before + 4);
    assert.equal(writer.threadRunning, false);
  });
});
