// Runs the compiled test suites with node:test. Usage: node scripts/run-tests.mjs [filter...]
// Node 20's test runner takes no globs, so the files are listed here.
//
// Browser tests hold a machine-wide lock (test/helpers/browser.ts), so at most one runs at a time.
// In one `node --test` with N files at once, a browser file waiting for the lock would sit on a slot
// doing nothing; so they run in a lane of their own (one file at a time) beside the lane of all the
// other files (SVC_TEST_CONCURRENCY slots: most of them wait on sockets and timers more than they
// compute), and the run takes about as long as the longer lane.
// On Postgres (SVC_TEST_DATABASE_URL) the browser files are left out unless named by a filter or
// SVC_TEST_BROWSERS=all: they drive the panel and the widget, whose server side the other files test
// on both databases, and they run in the SQLite pass.
import { spawn } from 'node:child_process';
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

const usesBrowser = (file) => fs.readFileSync(file, 'utf8').includes('/helpers/browser.js');
let browserFiles = chosen.filter(usesBrowser);
const serverFiles = chosen.filter((f) => !browserFiles.includes(f));
if (process.env.SVC_TEST_DATABASE_URL && filters.length === 0 && process.env.SVC_TEST_BROWSERS !== 'all' && browserFiles.length > 0) {
  console.log(`# Postgres: ${browserFiles.length} browser test files left out (they run in the SQLite pass; SVC_TEST_BROWSERS=all runs them here too)`);
  browserFiles = [];
}

const concurrency = Math.max(1, Number(process.env.SVC_TEST_CONCURRENCY ?? Math.max(2, os.availableParallelism())));
// node:test applies this to each file as a whole (and to each suite and test in it): far above what
// the slowest file takes on a loaded 2-core CI machine, it only turns a hung file into a failure
// that names it, instead of a run that never ends.
const timeoutMs = process.env.SVC_TEST_TIMEOUT_MS ?? String(30 * 60_000);
const failuresReporter = new URL('./failures-reporter.mjs', import.meta.url).href;

/**
 * One `node --test` over `laneFiles`. With `live`, its TAP goes to stdout as it comes; otherwise it
 * is kept in a file and printed when the lane ends, so two lanes never interleave their lines. What
 * the failures reporter writes (every failure again) is printed to stderr once every lane has ended,
 * so it is the tail of the log.
 */
function runLane(name, laneFiles, slots, live) {
  const started = Date.now();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-tests-'));
  const tapFile = live ? null : path.join(dir, 'tap');
  const failuresFile = path.join(dir, 'failures');
  const args = [
    '--test',
    `--test-concurrency=${slots}`,
    `--test-timeout=${timeoutMs}`,
    `--test-reporter=${process.stdout.isTTY && live ? 'spec' : 'tap'}`,
    `--test-reporter-destination=${tapFile ?? 'stdout'}`,
    `--test-reporter=${failuresReporter}`,
    `--test-reporter-destination=${failuresFile}`,
    ...laneFiles,
  ];
  const child = spawn(process.execPath, args, { stdio: 'inherit' });
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      if (tapFile) {
        process.stdout.write(`\n# ---- the ${name} lane's output:\n`);
        process.stdout.write(fs.existsSync(tapFile) ? fs.readFileSync(tapFile) : '(none)\n');
      }
      const failures = fs.existsSync(failuresFile) ? fs.readFileSync(failuresFile, 'utf8') : '';
      fs.rmSync(dir, { recursive: true, force: true });
      const seconds = Math.round((Date.now() - started) / 1000);
      const status = code ?? (signal ? 1 : 0);
      process.stdout.write(`# ${name} lane: ${laneFiles.length} files, ${seconds} s, ${status === 0 ? 'passed' : 'FAILED'}\n`);
      resolve({ status, failures });
    });
  });
}

const lanes = [];
if (browserFiles.length > 0 && serverFiles.length > 0 && concurrency > 1) {
  lanes.push(runLane('server', serverFiles, concurrency, true));
  lanes.push(runLane('browser', browserFiles, 1, false));
} else {
  lanes.push(runLane('all', [...serverFiles, ...browserFiles], concurrency, true));
}
const ended = await Promise.all(lanes);
for (const { failures } of ended) if (failures) process.stderr.write(failures);
process.exit(ended.some((lane) => lane.status !== 0) ? 1 : 0);
