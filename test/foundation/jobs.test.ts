import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DAY, ManualClock, MINUTE } from '../../src/platform/clock.js';
import { enqueue, type JobOutcome, JobRunner } from '../../src/platform/jobs.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('jobs: a unique job brought forward', () => {
  let s: TestServer;
  let clock: ManualClock;
  const runner = () => new JobRunner({ db: s.app.db, clock, log: s.app.log });
  const row = (key: string) => s.app.db.selectFrom('jobs').selectAll().where('unique_key', '=', key).executeTakeFirst();

  before(async () => {
    clock = new ManualClock('2031-05-01T10:00:00Z');
    s = await startTestServer({ clock });
    await s.app.jobs.stop();
  });
  after(() => s.stop());

  test('sooner moves a waiting job to now; a plain enqueue keeps its time', async () => {
    const runs: string[] = [];
    const r = runner();
    r.register({ kind: 'test.wait', run: async (p: { n: string }) => void runs.push(p.n) });
    await enqueue(s.app.db, clock, { kind: 'test.wait', payload: { n: 'first' }, uniqueKey: 'wait:1', runAt: new Date(clock.now().getTime() + DAY) });
    await enqueue(s.app.db, clock, { kind: 'test.wait', payload: { n: 'second' }, uniqueKey: 'wait:1' });
    assert.equal(await r.drain(), 0, 'still waiting for tomorrow');
    // sooner never moves a job later.
    await enqueue(s.app.db, clock, { kind: 'test.wait', uniqueKey: 'wait:1', runAt: new Date(clock.now().getTime() + 2 * DAY), sooner: true });
    assert.equal((await row('wait:1'))!.run_at, new Date(clock.now().getTime() + DAY).toISOString());
    await enqueue(s.app.db, clock, { kind: 'test.wait', uniqueKey: 'wait:1', sooner: true });
    assert.equal(await r.drain(), 1);
    assert.deepEqual(runs, ['first'], 'one job, its own payload');
    assert.equal(await row('wait:1'), undefined);
  });

  test('a job running under another worker’s lease is not started twice, and runs again after its run', async () => {
    let release!: () => void;
    let started!: () => void;
    const runningNow = new Promise<void>((r) => (started = r));
    let runs = 0;
    const kind = (outcome: () => JobOutcome) => ({
      kind: 'test.busy',
      leaseMs: 5 * MINUTE,
      run: async () => {
        runs++;
        if (runs === 1) {
          started();
          await new Promise<void>((r) => (release = r));
        }
        return outcome();
      },
    });
    const other = runner(); // another process's worker
    other.register(kind(() => ({ retryAt: new Date(clock.now().getTime() + DAY) })));
    const here = runner();
    here.register(kind(() => undefined));

    await enqueue(s.app.db, clock, { kind: 'test.busy', uniqueKey: 'busy:1' });
    const otherDrain = other.drain(1);
    await runningNow;
    await enqueue(s.app.db, clock, { kind: 'test.busy', uniqueKey: 'busy:1', sooner: true });
    assert.equal(await here.drain(), 0, 'leased: not claimed again while it runs');
    assert.equal(runs, 1);
    release();
    await otherDrain;
    // The run asked for tomorrow, but another run was asked for meanwhile: it is due now.
    const waiting = (await row('busy:1'))!;
    assert.equal(waiting.lease_until, null);
    assert.equal(waiting.run_at, clock.now().toISOString());
    assert.equal(await here.drain(), 1);
    assert.equal(runs, 2);
    assert.equal(await row('busy:1'), undefined, 'done');
  });

  test('a job that ends as done is kept when another run was asked for during it', async () => {
    let release!: () => void;
    let started!: () => void;
    const runningNow = new Promise<void>((r) => (started = r));
    let runs = 0;
    const r = runner();
    r.register({
      kind: 'test.done',
      run: async () => {
        runs++;
        if (runs === 1) {
          started();
          await new Promise<void>((res) => (release = res));
        }
      },
    });
    await enqueue(s.app.db, clock, { kind: 'test.done', uniqueKey: 'done:1' });
    const first = r.drain(1);
    await runningNow;
    await enqueue(s.app.db, clock, { kind: 'test.done', uniqueKey: 'done:1', sooner: true });
    release();
    await first;
    assert.ok(await row('done:1'), 'kept for the second run');
    await r.drain();
    assert.equal(runs, 2);
    assert.equal(await row('done:1'), undefined);
  });
});
