// Runs the compiled test suites with node:test. Usage: node scripts/run-tests.mjs [filter...]
// Node 20's test runner takes no globs, so the files are listed here.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve('dist/test');
const filters = process.argv.slice(2);
const files = [];
(function walk(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full);
    else if (entry.name.endsWith('.test.js')) files.push(full);
  }
})(root);
const chosen = files.filter((f) => filters.length === 0 || filters.some((x) => f.includes(x))).sort();
if (chosen.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const concurrency = process.env.SVC_TEST_CONCURRENCY ?? String(Math.max(2, os.availableParallelism()));
// node:test applies this to each file as a whole (and to each suite and test in it): far above what
// the slowest file takes on a loaded 2-core CI machine, it only turns a hung file into a failure
// that names it, instead of a run that never ends.
const timeoutMs = process.env.SVC_TEST_TIMEOUT_MS ?? String(30 * 60_000);
// The usual output (TAP, or spec on a terminal), then every failure again at the end (CI logs show
// their tail): scripts/failures-reporter.mjs.
const reporters = [
  `--test-reporter=${process.stdout.isTTY ? 'spec' : 'tap'}`,
  '--test-reporter-destination=stdout',
  `--test-reporter=${new URL('./failures-reporter.mjs', import.meta.url).href}`,
  '--test-reporter-destination=stderr',
];
const result = spawnSync(process.execPath, ['--test', `--test-concurrency=${concurrency}`, `--test-timeout=${timeoutMs}`, ...reporters, ...chosen], {
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
