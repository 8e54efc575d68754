// No file of code over 500 lines in src/, ui/, test/, bench/, scripts/ or migrations/ (issue 41): scripts/check-file-length.mjs,
// run by `npm run lint`.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { postgresUrl } from '../helpers/db.js';
import { tempDir } from '../helpers/server.js';

const script = path.resolve('scripts/check-file-length.mjs');
const run = (root?: string) => spawnSync(process.execPath, [script, ...(root ? ['--root', root] : [])], { encoding: 'utf8' });
const lines = (n: number) => `${Array.from({ length: n }, (_, i) => `export const a${i} = ${i};`).join('\n')}\n`;

function fixture(files: Record<string, string>): string {
  const root = tempDir('svc-file-length-');
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), text);
  }
  return root;
}

// The check reads source files only, so it runs in the SQLite pass.
describe('file length check (scripts/check-file-length.mjs)', {
  skip: postgresUrl ? 'the check reads source files only: it runs in the SQLite pass' : false,
}, () => {
  test('the repository passes', () => {
    const r = run();
    assert.equal(r.status, 0, r.stderr);
  });

  test('500 lines pass; 501 fail with the file and its length, in src/ and in ui/, whatever the kind of source', () => {
    assert.equal(run(fixture({ 'src/a/service.ts': lines(500), 'ui/panel/src/A.tsx': lines(500) })).status, 0);
    for (const name of ['src/a/service.ts', 'src/a/b/c.mjs', 'ui/panel/src/conversations/List.tsx', 'ui/widget/src/panel.css']) {
      const r = run(fixture({ 'src/ok.ts': lines(10), [name]: lines(501) }));
      assert.equal(r.status, 1, name);
      assert.match(r.stderr, new RegExp(`${name.replace(/[.]/g, '\\.')}: 501 lines, over the limit of 500`));
    }
  });

  test('tests, benches, scripts and migrations are checked too, shell scripts included', () => {
    for (const name of [
      'src/a/service.test.ts',
      'test/a/b.test.ts',
      'test/helpers/scene.ts',
      'bench/a.ts',
      'scripts/run.mjs',
      'scripts/image-test.sh',
      'migrations/0099_big.ts',
    ]) {
      const r = run(fixture({ [name]: lines(501) }));
      assert.equal(r.status, 1, name);
      assert.match(r.stderr, new RegExp(`${name.replace(/[.]/g, '\\.')}: 501 lines, over the limit of 500`));
    }
  });

  test('generated code, type declarations and files outside those folders are not checked', () => {
    const r = run(
      fixture({
        'ui/generated/api.d.ts': lines(900),
        'ui/panel/src/types.d.ts': lines(900),
        'docs/internals.md': lines(900),
        'test/fixtures/mail.eml': lines(900),
      }),
    );
    assert.equal(r.status, 0, r.stderr);
  });
});
