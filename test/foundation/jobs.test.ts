import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DAY, ManualClock, MINUTE } from '../../src/platform/clock.js';
import { enqueue, type JobOutcome, JobRunner } from '../../src/platform/jobs.js';
import { countQueries } from '../helpers/count-queries.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
    if (await check()) return;
    await sleep(10);
  }
  assert.fail(`timed out waiting for ${what}`);
}

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

describe('jobs: wake-ups and batches', () => {
  let s: TestServer;
  let clock: ManualClock;
  const HOUR_MS = 3_600_000;
  const left = (kind: string) => s.app.db.selectFrom('jobs').selectAll().where('kind', '=', kind).execute();

  before(async () => {
    clock = new ManualClock('2031-06-01T10:00:00Z');
    s = await startTestServer({ clock });
    await s.app.jobs.stop();
  });
  after(() => s.stop());

  test('the first wake-up after a quiet spell looks at once; wake-ups within the window after it are one later look', async () => {
    const counted = countQueries(s.app.db);
    const runs: string[] = [];
    // A window of an hour: within the test, only the first wake-up can look.
    const r = new JobRunner({ db: counted.db, clock, log: s.app.log }, { pollMs: HOUR_MS, wakeWindowMs: HOUR_MS });
    r.register({ kind: 'test.wake', run: async (p: { n: string }) => void runs.push(p.n) });
    await enqueue(s.app.db, clock, { kind: 'test.wake', payload: { n: 'first' } });
    r.start();
    await until(() => counted.count('delete', 'jobs') === 1, 'the first job to run and end');
    await sleep(50);
    assert.deepEqual(runs, ['first']);
    const looks = counted.count('select', 'jobs');
    // Mail committed in one flush after another: every commit announces its events (a wake-up) on a turn of its own.
    for (let i = 0; i < 20; i++) {
      await enqueue(s.app.db, clock, { kind: 'test.wake', payload: { n: `burst-${i}` } });
      r.wake();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await sleep(50);
    assert.equal(counted.count('select', 'jobs'), looks, 'no look before the window ends');
    assert.deepEqual(runs, ['first']);
    await r.stop();
    assert.equal(await r.drain(), 20, 'stored, so run by the next look');
  });

  test('a batch kind: due jobs claimed with one statement per batch, run together, removed with one', async () => {
    const counted = countQueries(s.app.db);
    const batches: string[][] = [];
    const r = new JobRunner({ db: counted.db, clock, log: s.app.log });
    r.register({
      kind: 'test.batch',
      batchSize: 8,
      run: async (p: { n: string }) => void batches.push([p.n]),
      runBatch: async (jobs: { payload: { n: string } }[]) => void batches.push(jobs.map((j) => j.payload.n)),
    });
    for (let i = 0; i < 10; i++) await enqueue(s.app.db, clock, { kind: 'test.batch', payload: { n: String(i) } });
    assert.equal(await r.drain(), 10);
    assert.deepEqual(
      batches.map((b) => b.length),
      [8, 2],
    );
    assert.deepEqual(batches.flat().sort(), ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'], 'each job once');
    assert.equal(counted.count('update', 'jobs'), 2, 'one claim statement per batch');
    assert.equal(counted.count('delete', 'jobs'), 2, 'one removal per batch');
    assert.deepEqual(await left('test.batch'), []);
  });

  test('a batch that passes its transaction to done has its jobs removed in it: nothing is removed after it, and a rollback keeps them', async () => {
    const counted = countQueries(s.app.db);
    const removalsWhenCommitted: number[] = [];
    const r = new JobRunner({ db: counted.db, clock, log: s.app.log });
    r.register({
      kind: 'test.joined',
      run: async () => {},
      runBatch: async (_jobs, done) => {
        await counted.db.transaction().execute(async (trx) => {
          await done(trx);
          removalsWhenCommitted.push(counted.count('delete', 'jobs'));
        });
      },
    });
    for (const n of ['a', 'b', 'c']) await enqueue(s.app.db, clock, { kind: 'test.joined', uniqueKey: `joined:${n}` });
    assert.equal(await r.drain(), 3);
    assert.deepEqual(removalsWhenCommitted, [1], 'removed with one statement inside the batch transaction');
    assert.equal(counted.count('delete', 'jobs'), 1, 'no removal after the batch');
    assert.deepEqual(await left('test.joined'), []);

    // The batch's transaction rolls back after done: its jobs are still there and run one by one.
    const alone: string[] = [];
    const failing = new JobRunner({ db: s.app.db, clock, log: s.app.log });
    failing.register({
      kind: 'test.rolledback',
      run: async (p: { n: string }) => void alone.push(p.n),
      runBatch: async (_jobs, done) => {
        await s.app.db.transaction().execute(async (trx) => {
          await done(trx);
          throw new Error('the batch fails after removing its jobs');
        });
      },
    });
    for (const n of ['x', 'y']) await enqueue(s.app.db, clock, { kind: 'test.rolledback', payload: { n }, uniqueKey: `rolledback:${n}` });
    assert.equal(await failing.drain(), 2);
    assert.deepEqual(alone.sort(), ['x', 'y'], 'the rolled-back removal left both jobs to run alone');
    assert.deepEqual(await left('test.rolledback'), []);
  });

  test('a batch kind with one due job runs it through runBatch; when that throws the job is retried on the backoff', async () => {
    let batchRuns = 0;
    let singleRuns = 0;
    const r = new JobRunner({ db: s.app.db, clock, log: s.app.log });
    r.register({
      kind: 'test.single',
      run: async () => void singleRuns++,
      runBatch: async () => {
        batchRuns++;
        throw new Error('not now');
      },
    });
    await enqueue(s.app.db, clock, { kind: 'test.single', uniqueKey: 'single:1' });
    assert.equal(await r.drain(), 1);
    assert.deepEqual([batchRuns, singleRuns], [1, 0]);
    const [job] = await left('test.single');
    assert.equal(job.attempts, 1);
    assert.equal(job.last_error, 'not now');
    assert.equal(job.run_at, new Date(clock.now().getTime() + 2000).toISOString(), 'retried on the default backoff');
    await s.app.db.deleteFrom('jobs').where('kind', '=', 'test.single').execute();
  });

  test('a batch that fails is run one job at a time: only the job that fails alone is retried; one asked for again meanwhile is kept', async () => {
    const runs: string[] = [];
    let batchRuns = 0;
    const r = new JobRunner({ db: s.app.db, clock, log: s.app.log });
    r.register({
      kind: 'test.fragile',
      run: async (p: { n: string }) => {
        if (p.n === 'bad') throw new Error('bad payload');
        runs.push(p.n);
      },
      runBatch: async () => {
        batchRuns++;
        throw new Error('one of them is bad');
      },
    });
    for (const n of ['good-1', 'bad', 'good-2']) await enqueue(s.app.db, clock, { kind: 'test.fragile', payload: { n }, uniqueKey: `fragile:${n}` });
    assert.equal(await r.drain(), 3);
    assert.equal(batchRuns, 1);
    assert.deepEqual(runs.sort(), ['good-1', 'good-2'], 'each good job once');
    const [bad, ...rest] = await left('test.fragile');
    assert.equal(rest.length, 0);
    assert.equal(bad.unique_key, 'fragile:bad');
    assert.equal(bad.lease_until, null);
    assert.equal(bad.attempts, 1);
    assert.equal(bad.run_at, new Date(clock.now().getTime() + 2000).toISOString(), 'retried on the default backoff');
    await s.app.db.deleteFrom('jobs').where('kind', '=', 'test.fragile').execute();

    // A run asked for during the batch's run (sooner) stands: that job is kept, the others removed.
    const kept = new JobRunner({ db: s.app.db, clock, log: s.app.log });
    kept.register({
      kind: 'test.again',
      run: async () => {},
      runBatch: async () => {
        await enqueue(s.app.db, clock, { kind: 'test.again', uniqueKey: 'again:b', sooner: true });
      },
    });
    for (const n of ['a', 'b', 'c']) await enqueue(s.app.db, clock, { kind: 'test.again', uniqueKey: `again:${n}` });
    assert.equal(await kept.drain(1), 3);
    const again = await left('test.again');
    assert.deepEqual(
      again.map((j) => [j.unique_key, j.lease_until, j.run_at]),
      [['again:b', null, clock.now().toISOString()]],
    );
  });
});
