// The test command StrykerJS runs for every mutant (stryker.config.json; `npm run mutation`).
// Stryker writes all mutants into the sandbox's sources at once and picks the active one with
// __STRYKER_ACTIVE_MUTANT__, so the sandbox is compiled once (first run) and each mutant then runs
// only the test files that cover the source file it sits in (all of them when no mutant is active).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** Source file (as listed in stryker.config.json's mutate) -> test path filters of scripts/run-tests.mjs. */
export const TESTS_BY_SOURCE = {
  'src/auth/access.ts': ['foundation/access', 'mailbox-migration/access', 'events/stream'],
  'src/webhooks/address.ts': ['webhooks/address'],
  'src/mailbox-migration/sources/imap.ts': ['mailbox-migration/imap'],
  'src/conversations/retention.ts': ['lifecycle/retention'],
  'src/lifecycle/retention.ts': ['lifecycle/retention'],
  'src/platform/retention-rule.ts': ['lifecycle/retention', 'people/passkeys', 'members/invites'],
};

const BUILT = 'dist/.mutation-built';

// The sandbox lives in <project>/.stryker-tmp/<sandbox>; Stryker links node_modules only when it is a
// real directory, and here it may be a symlink itself.
if (!fs.existsSync('node_modules')) fs.symlinkSync(fs.realpathSync(path.resolve('../../node_modules')), 'node_modules', 'dir');

function run(args) {
  return (
    spawnSync(process.execPath, args, { stdio: 'inherit', env: { ...process.env, SVC_TEST_CONCURRENCY: process.env.SVC_TEST_CONCURRENCY ?? '1' } }).status ?? 1
  );
}

if (!fs.existsSync(BUILT)) {
  // The instrumented files carry @ts-nocheck; a failed type check elsewhere still means a broken sandbox.
  if (run(['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json']) !== 0) process.exit(1);
  fs.writeFileSync(BUILT, '');
}

const active = process.env.__STRYKER_ACTIVE_MUTANT__;
let filters = [...new Set(Object.values(TESTS_BY_SOURCE).flat())];
if (active) {
  const marker = `stryMutAct_9fa48("${active}")`;
  const source = Object.keys(TESTS_BY_SOURCE).find((file) => fs.readFileSync(file, 'utf8').includes(marker));
  if (source) filters = TESTS_BY_SOURCE[source];
}
process.exit(run(['scripts/run-tests.mjs', ...filters]));
