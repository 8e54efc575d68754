// Fixed-window rate limits counted in the database: limiters built by different processes (here two
// apps on one database) share the count, the window starts afresh once it ends, keys are stored
// hashed, and retention removes ended windows.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { type App, buildServices } from '../../src/context.js';
import { ManualClock } from '../../src/platform/clock.js';
import { AppError } from '../../src/platform/errors.js';
import { createLogger } from '../../src/platform/log.js';
import { deleteEndedRateWindows, RateLimiter } from '../../src/platform/rate-limit.js';
import { applyMigrations } from '../../src/server/serve.js';
import { type TestEnv, testEnv } from '../helpers/server.js';

describe('database rate limits', () => {
  let te: TestEnv;
  let one: App;
  let two: App;
  const clock = new ManualClock('2031-05-01T10:00:00Z');

  before(async () => {
    te = await testEnv();
    const log = createLogger({ level: 'error', write: () => {} });
    one = buildServices(loadConfig(te.env), { log, clock });
    two = buildServices(loadConfig(te.env), { log, clock });
    await applyMigrations(one, true);
  });
  after(async () => {
    await one?.close();
    await two?.close();
    await te?.cleanup();
  });

  const refusal = async (p: Promise<void>) => {
    try {
      await p;
    } catch (error) {
      assert.ok(error instanceof AppError);
      return error;
    }
    assert.fail('expected 429');
  };

  test('limiters of two processes share one window; it starts afresh when it ends', async () => {
    const here = new RateLimiter(one, 'sessions_per_ip', 3, 60_000);
    const there = new RateLimiter(two, 'sessions_per_ip', 3, 60_000);
    await here.hit('203.0.113.9');
    await there.hit('203.0.113.9');
    clock.advance(20_000);
    await here.hit('203.0.113.9');
    const refused = await refusal(there.hit('203.0.113.9', 'slow down'));
    assert.equal(refused.status, 429);
    assert.equal(refused.code, 'rate_limited');
    assert.equal(refused.message, 'slow down');
    assert.deepEqual(refused.extra, { retry_after: 40 }, 'until the window that began with the first hit ends');
    // Another key, and another limit with the same key, count apart.
    await here.hit('198.51.100.1');
    await new RateLimiter(one, 'messages_per_session', 3, 60_000).hit('203.0.113.9');

    clock.advance(40_000);
    await there.hit('203.0.113.9');
    await here.hit('203.0.113.9');
    await here.hit('203.0.113.9');
    assert.equal((await refusal(here.hit('203.0.113.9'))).extra?.retry_after, 60);

    const rows = await one.db.selectFrom('rate_limits').selectAll().execute();
    assert.equal(rows.length, 3);
    assert.ok(
      rows.every((r) => !r.key.includes('203.0.113') && !r.key.includes('198.51')),
      'addresses are not stored',
    );
  });

  test('retention removes windows that ended', async () => {
    clock.advance(30_000);
    // 198.51.100.1's and the other limit's windows ended; the current one (started 30 s ago) runs.
    assert.equal(await deleteEndedRateWindows(one.db, clock.now(), 500), 2);
    assert.equal((await one.db.selectFrom('rate_limits').selectAll().execute()).length, 1);
  });
});
