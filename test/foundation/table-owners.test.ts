import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { postgresUrl } from '../helpers/db.js';
import { tempDir } from '../helpers/server.js';

const script = path.resolve('scripts/check-table-owners.mjs');
const run = (root?: string) => spawnSync(process.execPath, [script, ...(root ? ['--root', root] : [])], { encoding: 'utf8' });

/** A small source tree: `notes` owns notes and note_tags, `tags` owns tags; `extra` is added to src/. */
function fixture(extra: Record<string, string>): string {
  const root = tempDir('svc-table-owners-');
  const files: Record<string, string> = {
    'src/db/tables/notes.ts': 'export interface NotesTable { id: string }\nexport interface NoteTables {\n  notes: NotesTable;\n  note_tags: NotesTable;\n}\n',
    'src/db/tables/tags.ts': 'export interface TagTables {\n  tags: { id: string };\n}\n',
    'src/notes/service.ts':
      "export const list = (db: any) => db.selectFrom('notes').innerJoin('note_tags as nt', 'nt.id', 'notes.id').selectAll().execute();\n",
    'src/tags/service.ts': "export const tagsOf = (db: any) => db.selectFrom('tags').selectAll().execute();\n",
    ...extra,
  };
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), text);
  }
  return root;
}

// The check reads source files only, so it runs in the SQLite pass.
describe('table ownership check (scripts/check-table-owners.mjs)', {
  skip: postgresUrl ? 'the check reads source files only: it runs in the SQLite pass' : false,
}, () => {
  test('the repository passes: every table is used by its owner or through the allowed list', () => {
    const r = run();
    assert.equal(r.status, 0, r.stderr);
  });

  test('owners using their own tables, and others calling the owner, pass', () => {
    const r = run(fixture({ 'src/tags/uses-notes.ts': "import { list } from '../notes/service.js';\nexport const all = (db: any) => list(db);\n" }));
    assert.equal(r.status, 0, r.stderr);
  });

  test("a feature touching another feature's table fails with file:line and the rule, in every form", () => {
    const r = run(
      fixture({
        'src/tags/bad.ts': [
          'export async function a(db: any) {',
          "  await db.selectFrom('notes as n').selectAll().execute();",
          '  await db',
          '    .updateTable(',
          "      'note_tags')",
          "    .set({ id: 'x' }).execute();",
          "  await db.selectFrom('tags').leftJoin('notes', 'notes.id', 'tags.id').selectAll().execute();",
          "  await sql`delete from note_tags where id = ${'x'}`.execute(db);",
          '}',
        ].join('\n'),
      }),
    );
    assert.equal(r.status, 1, r.stderr);
    const lines = r.stderr.split('\n').filter((l) => l.startsWith('src/'));
    assert.deepEqual(
      lines.map((l) => l.split(': ')[0] + ' ' + /(\w+(?: \w+)?) '(\w+)', a table of src\/(\w+)\//.exec(l)!.slice(1).join(' ')),
      [
        'src/tags/bad.ts:2 selectFrom notes notes',
        'src/tags/bad.ts:4 updateTable note_tags notes',
        'src/tags/bad.ts:7 leftJoin notes notes',
        'src/tags/bad.ts:8 sql from note_tags notes',
      ],
    );
    assert.match(r.stderr, /only through the owner's functions \(add one to src\/notes\/\)/);
    assert.match(r.stderr, /4 reference\(s\) to another feature's tables/);
  });

  test('a table whose owner folder does not exist fails until OWNER_OF names one', () => {
    const r = run(fixture({ 'src/db/tables/orphans.ts': 'export interface OrphanTables {\n  orphans: { id: string };\n}\n' }));
    assert.equal(r.status, 1);
    assert.match(r.stderr, /table 'orphans' has no owner folder \(src\/orphans\/ does not exist\)/);
  });
});
