// The panel's strings (issue 41): a catalogue per area and language (ui/panel/src/<area>/strings/<lang>.ts,
// the shared ones in ui/panel/src/i18n/). Every key exists in every language, in the same catalogue,
// with the same {placeholders}; no key is in two catalogues; ui/panel/src/strings.ts adds every one.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { postgresUrl } from '../helpers/db.js';
import { tempDir } from '../helpers/server.js';

const SRC = path.resolve('ui/panel/src');
const LANGUAGES = ['en', 'tr'];

/** Folders holding one catalogue per language: i18n/ and every strings/ folder. */
function catalogueFolders(): string[] {
  const found = [path.join(SRC, 'i18n')];
  (function walk(dir: string) {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (!e.isDirectory()) continue;
      const full = path.join(dir, e.name);
      if (e.name === 'strings') found.push(full);
      else walk(full);
    }
  })(SRC);
  return found.sort();
}

/** A catalogue file's exported object, compiled as the build does (types dropped). */
async function load(file: string, into: string): Promise<Record<string, string>> {
  const js = ts.transpileModule(fs.readFileSync(file, 'utf8'), { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
  const out = path.join(into, `${path.relative(SRC, file).replaceAll(path.sep, '_')}.mjs`);
  fs.writeFileSync(out, js.outputText);
  const mod = (await import(pathToFileURL(out).href)) as Record<string, unknown>;
  const values = Object.values(mod);
  assert.equal(values.length, 1, `${file} exports one catalogue`);
  return values[0] as Record<string, string>;
}

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

// The check reads source files only, so it runs in the SQLite pass.
describe('panel strings', { skip: postgresUrl ? 'the check reads source files only: it runs in the SQLite pass' : false }, () => {
  test('every key is in every language, with the same placeholders, in exactly one catalogue', async () => {
    const dir = tempDir('svc-strings-');
    const owner = new Map<string, string>();
    const folders = catalogueFolders();
    assert.ok(folders.length > 5, 'the catalogues are split per area');
    for (const folder of folders) {
      const where = path.relative(SRC, folder);
      const files = fs.readdirSync(folder).filter((f) => f.endsWith('.ts') && f !== 'index.ts');
      assert.deepEqual(files.map((f) => f.replace(/\.ts$/, '')).sort(), [...LANGUAGES].sort(), `${where}: one file per language`);
      const [first, ...others] = await Promise.all(LANGUAGES.map((lang) => load(path.join(folder, `${lang}.ts`), dir)));
      for (const key of Object.keys(first)) {
        assert.ok(!owner.has(key), `${key} is in ${owner.get(key)} and ${where}`);
        owner.set(key, where);
      }
      for (const [i, other] of others.entries()) {
        const lang = LANGUAGES[i + 1];
        const missing = Object.keys(first).filter((k) => !(k in other));
        const extra = Object.keys(other).filter((k) => !(k in first));
        assert.deepEqual(missing, [], `${where}/${lang}.ts lacks keys of ${LANGUAGES[0]}.ts`);
        assert.deepEqual(extra, [], `${where}/${lang}.ts has keys ${LANGUAGES[0]}.ts lacks`);
        for (const key of Object.keys(first)) {
          assert.ok(other[key].trim(), `${where}/${lang}.ts: ${key} is empty`);
          assert.deepEqual(placeholders(other[key]), placeholders(first[key]), `${where}/${lang}.ts: ${key} has other placeholders`);
        }
      }
    }
    assert.ok(owner.size > 850, `all of the panel's strings are found (${owner.size})`);
  });

  test('strings.ts (or a lazily loaded area its own index.ts) adds every area catalogue in every language', () => {
    const text = fs.readFileSync(path.join(SRC, 'strings.ts'), 'utf8');
    for (const folder of catalogueFolders()) {
      const where = path.relative(SRC, folder).replaceAll(path.sep, '/');
      if (where === 'i18n') continue; // i18n/index.ts starts from the shared catalogues
      const areaIndex = path.join(folder, '..', 'index.ts');
      const own = fs.existsSync(areaIndex) ? fs.readFileSync(areaIndex, 'utf8') : '';
      for (const lang of LANGUAGES) {
        const added = text.includes(`'./${where}/${lang}'`) || (own.includes(`'./strings/${lang}'`) && own.includes('addStrings('));
        assert.ok(added, `strings.ts or ${where}/../index.ts adds ./${where}/${lang}`);
      }
    }
  });
});
