// The browser-test harness itself: the lock that keeps browser tests apart, the axe check (it must
// fail on serious violations, or it proves nothing), screenshots and the skip reason.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { acquireBrowserLock, assertAccessible, type BrowserSession, browserSkipReason, launchBrowser, screenshot } from '../helpers/browser.js';
import { tempDir } from '../helpers/server.js';

describe('browser lock', () => {
  test('one holder at a time; a lock left by a dead process is taken over', async () => {
    const dir = tempDir();
    const lockFile = path.join(dir, 'browser.lock');
    try {
      const release = await acquireBrowserLock({ lockFile });
      assert.equal(fs.readFileSync(lockFile, 'utf8'), String(process.pid));
      let secondGot = false;
      const second = acquireBrowserLock({ lockFile, timeoutMs: 5_000 }).then((r) => {
        secondGot = true;
        return r;
      });
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(secondGot, false, 'the second waits while the first holds the lock');
      release();
      const releaseSecond = await second;
      assert.equal(secondGot, true);
      await assert.rejects(acquireBrowserLock({ lockFile, timeoutMs: 300 }), /holds/);
      releaseSecond();
      assert.equal(fs.existsSync(lockFile), false);

      // A process that ended without releasing.
      const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
      fs.writeFileSync(lockFile, dead);
      const releaseThird = await acquireBrowserLock({ lockFile, timeoutMs: 2_000 });
      assert.equal(fs.readFileSync(lockFile, 'utf8'), String(process.pid));
      releaseThird();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the skip reason names a missing chromium', () => {
    assert.match(browserSkipReason('/nonexistent/chromium')!, /chromium not found at \/nonexistent\/chromium/);
  });
});

describe('browser harness', { skip: browserSkipReason() }, () => {
  let browser: BrowserSession;
  let page: Page;
  before(async () => {
    browser = await launchBrowser();
    ({ page } = await browser.newPage());
  });
  after(() => browser?.close());

  test('the axe check fails on serious or critical violations and passes a clean page', async () => {
    await page.setContent(
      '<html><head><title>Broken</title></head><body><button></button><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw="></body></html>',
    );
    await assert.rejects(
      assertAccessible(page),
      (err: Error) => /button-name/.test(err.message) && /image-alt/.test(err.message) && /html-has-lang/.test(err.message),
    );
    await page.setContent('<html lang="en"><head><title>Fine</title></head><body><main><h1>Fine</h1><button>Save</button></main></body></html>');
    const results = await assertAccessible(page);
    assert.ok(results.passes.length > 0);
  });

  test('screenshots are PNG files under the artifacts directory', async () => {
    const file = await screenshot(page, 'harness check');
    assert.match(path.basename(file), /^harness-check\.png$/);
    assert.deepEqual([...fs.readFileSync(file).subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
  });
});
