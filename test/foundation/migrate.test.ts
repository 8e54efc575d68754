import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { migrations } from '../../migrations/index.js';
import { runSvc, spawnServer, type TestEnv, testEnv } from '../helpers/server.js';

describe('svc migrate and serve --migrate=false', () => {
  let te: TestEnv;
  before(async () => {
    te = await testEnv();
  });
  after(() => te.cleanup());
  const names = Object.keys(migrations);

  test('serve --migrate=false refuses to start while migrations are pending', async () => {
    await assert.rejects(spawnServer(te.env, ['serve', '--migrate=false']), (e: Error & { code?: number }) => {
      assert.notEqual(e.code, 0);
      assert.match(e.message, /svc migrate up/);
      return true;
    });
  });

  test('operator commands refuse to work on an outdated schema', async () => {
    const r = await runSvc(['inbox', 'list', '--workspace', 'x'], { env: te.env });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /pending migration.*svc migrate up/);
  });

  test('status lists every migration as pending, up applies them all, status shows their times', async () => {
    let r = await runSvc(['migrate', 'status'], { env: te.env });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      r.stdout.trim().split('\n'),
      names.map((n) => `${n}\tpending`),
    );
    r = await runSvc(['migrate', 'up'], { env: te.env });
    assert.equal(r.code, 0, r.stderr);
    for (const n of names) assert.match(r.stderr, new RegExp(`applied ${n}`));
    r = await runSvc(['migrate', 'status'], { env: te.env });
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, names.length);
    for (const [i, line] of lines.entries()) {
      const [name, at] = line.split('\t');
      assert.equal(name, names[i]);
      assert.ok(!Number.isNaN(Date.parse(at)), at);
    }
    r = await runSvc(['migrate', 'up'], { env: te.env });
    assert.match(r.stderr, /nothing to apply/);
  });

  test('serve --migrate=false starts once the schema is current', async () => {
    const s = await spawnServer(te.env, ['serve', '--migrate=false']);
    const r = await fetch(`${s.url}/readyz`);
    assert.equal(r.status, 200);
    assert.equal(await s.kill(), 0);
  });

  test('down rolls back the latest migration only, and up re-applies it', async () => {
    let r = await runSvc(['migrate', 'down'], { env: te.env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`rolled back ${names[names.length - 1]}`));
    r = await runSvc(['migrate', 'status'], { env: te.env });
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines[lines.length - 1], `${names[names.length - 1]}\tpending`);
    if (names.length > 1) assert.doesNotMatch(lines[lines.length - 2], /pending/);
    r = await runSvc(['migrate', 'up'], { env: te.env });
    assert.equal(r.code, 0, r.stderr);
  });
});
