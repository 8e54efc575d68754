#!/usr/bin/env node
// Features own their tables (issue 20): a feature reads or writes another feature's tables only
// through that feature's functions. This check finds kysely table references in src/**/*.ts
// (selectFrom, insertInto, updateTable, deleteFrom, the joins, and table names in sql`…` text) and
// fails (exit 1, file:line and the rule) on a reference from outside the owning folder that is not
// on the allowed list below.
//
// Usage: node scripts/check-table-owners.mjs [--root <dir>]   (default: the repository)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Owner folders (under src/) of tables whose owner is not named by their file in src/db/tables/:
 * tables/broadcasts.ts → src/broadcasts/ unless listed here. A table with no owner fails the check.
 */
export const OWNER_OF = {
  // tables/core.ts: the foundation's tables, each with the feature that manages it
  server_meta: 'platform',
  rate_limits: 'platform',
  workspaces: 'workspaces',
  people: 'people',
  sessions: 'people',
  sign_in_codes: 'people',
  memberships: 'members',
  api_keys: 'api-keys',
  inboxes: 'inboxes',
  channels: 'channels',
  channel_smtp_tests: 'channels',
  jobs: 'platform',
  events: 'events',
  // tables/conversations.ts
  contacts: 'contacts',
  contact_emails: 'contacts',
  contact_external_ids: 'contacts',
  contact_search: 'contacts',
  conversations: 'conversations',
  conversation_labels: 'conversations',
  conversation_reads: 'conversations',
  drafts: 'conversations',
  inbox_uploads: 'conversations',
  conversation_moves: 'conversations',
  messages: 'conversations',
  attachments: 'conversations',
  mail_ids: 'mail',
  mail_digests: 'mail',
  // tables/people.ts, tables/team.ts, tables/broadcasts.ts
  passkeys: 'people',
  passkey_challenges: 'people',
  push_subscriptions: 'push',
  invites: 'members',
  sign_in_links: 'people',
  operator_digest_lines: 'operator-digest',
  // created by migrations only (no kysely type): the search index and the migrator's own table
  message_search: 'search',
  messages_fts: 'search',
  kysely_migration: 'db',
  kysely_migration_lock: 'db',
};

/**
 * References allowed across owners, each with the reason. `path` is a file or a folder (ending
 * in /) under the root; `tables` the tables it may touch ('*' for any).
 */
export const ALLOWED = [
  {
    path: 'src/lifecycle/',
    tables: '*',
    why: "workspace and inbox deletion steps, retention rules and their registry delete every feature's rows in order, in batches",
  },
  { path: 'src/backup/', tables: '*', why: 'backup and restore copy every table as it is' },
  {
    path: 'src/ratings/service.ts',
    tables: ['conversations'],
    why: "a channel's rating requests are found through their conversation's channel (one join: a request stores no channel), for the retry after a new sign-in",
  },
  { path: 'src/', tables: ['server_meta'], why: 'server_meta is a key-value table shared by design: each feature reads and writes only its own keys' },
  { path: 'src/', tables: ['jobs'], why: 'the job queue: features store their own job rows (enqueue) in their transactions; src/platform/jobs.ts runs them' },
  {
    path: 'src/search/',
    tables: ['conversations', 'messages', 'contacts', 'contact_emails', 'inboxes'],
    why: 'one ranked full-text query over the index joined to the rows it finds; the index is kept by triggers (migration 0016)',
  },
  {
    path: 'src/auth/',
    tables: ['api_keys', 'sessions', 'memberships', 'people', 'workspaces'],
    why: 'credentials: who is calling and whether that is still valid (key, session, membership, live workspace) is decided in one place (issue 20 item 1)',
  },
  {
    path: 'src/channels/store.ts',
    tables: ['workspaces'],
    why: 'mail to an address (at RCPT) and a chat key resolve only in a workspace not deleted: one indexed join where they are looked up',
  },
  { path: 'src/operator-digest/', tables: '*', why: 'the operator digest is an aggregate over every workspace (counts only, no content)' },
  {
    path: 'src/people/service.ts',
    tables: ['memberships', 'workspaces'],
    why: "an account spans workspaces: its list of workspaces, the only-owner check of its deletion and the Postgres lock that keeps two owners deleting themselves at once from both passing it are one transaction's statements over the person's memberships",
  },
  {
    path: 'src/webhooks/',
    tables: ['events'],
    why: 'a webhook delivery is a row of the event stream sent somewhere: the dispatcher and the delivery log read the event they deliver by its seq (payload, type), in the same query as the delivery',
  },
  {
    path: 'src/events/service.ts',
    tables: ['webhook_deliveries', 'webhook_outbox'],
    why: 'pruning the event stream keeps the events a kept delivery (or one not yet made from the outbox) still refers to, for redelivery: one statement, so one snapshot',
  },
];

/**
 * Not yet moved behind the owner's functions (the rest of issue 20 item 4): each entry is one
 * file and one table. This list only shrinks: a reference that is gone makes its line a warning
 * ("remove it here"); a new cross-owner reference fails.
 */
export const NOT_YET_MOVED = [];

const CALL =
  /\b(selectFrom|insertInto|replaceInto|updateTable|deleteFrom|mergeInto|innerJoin|leftJoin|rightJoin|fullJoin|crossJoin)\(\s*(\[[^\]]*\]|'[^']*'|"[^"]*")/g;
const SQL_TEMPLATE = /\bsql(?:<[^`]*?>)?`([^`]*)`/g;
const SQL_TABLE = /\b(from|join|update|into)\s+([a-z_][a-z0-9_]*)/gi;

function walk(dir, out = []) {
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const toPosix = (p) => p.split(sep).join('/');
const lineOf = (text, index) => text.slice(0, index).split('\n').length;

/** Table → owner folder, from the table interfaces in src/db/tables/*.ts and OWNER_OF. */
export function tableOwners(root) {
  const owners = new Map();
  const problems = [];
  const dir = join(root, 'src/db/tables');
  for (const file of walk(dir)) {
    const text = readFileSync(file, 'utf8');
    const base = toPosix(relative(dir, file)).replace(/\.ts$/, '');
    for (const block of text.matchAll(/export interface \w+Tables[^{]*\{([^}]*)\}/g)) {
      for (const m of block[1].matchAll(/^\s*([a-z_][a-z0-9_]*)\s*:/gm)) {
        const owner = OWNER_OF[m[1]] ?? base;
        if (!statSync(join(root, 'src', owner), { throwIfNoEntry: false })?.isDirectory()) {
          problems.push(
            `src/db/tables/${base}.ts: table '${m[1]}' has no owner folder (src/${owner}/ does not exist): name one in OWNER_OF of scripts/check-table-owners.mjs`,
          );
        }
        owners.set(m[1], owner);
      }
    }
  }
  for (const [table, owner] of Object.entries(OWNER_OF)) if (!owners.has(table)) owners.set(table, owner);
  return { owners, problems };
}

/** Every table reference of one file: { line, table, how }. Names that are no table (CTEs, aliases) are skipped. */
export function tableReferences(text, known) {
  const refs = [];
  for (const m of text.matchAll(CALL)) {
    for (const s of m[2].matchAll(/['"]([^'"]+)['"]/g)) {
      const table = s[1].trim().split(/\s+/)[0].split('.').pop();
      if (known.has(table)) refs.push({ line: lineOf(text, m.index), table, how: m[1] });
    }
  }
  for (const t of text.matchAll(SQL_TEMPLATE)) {
    const start = t.index + t[0].indexOf('`') + 1;
    for (const m of t[1].matchAll(SQL_TABLE)) {
      const table = m[2].toLowerCase();
      if (known.has(table)) refs.push({ line: lineOf(text, start + m.index), table, how: `sql ${m[1].toLowerCase()}` });
    }
  }
  return refs;
}

const allows = (entry, file, table) =>
  (entry.path.endsWith('/') ? file.startsWith(entry.path) : file === entry.path) && (entry.tables === '*' || entry.tables.includes(table));

export function check(root, { allowed = ALLOWED, notYetMoved = NOT_YET_MOVED } = {}) {
  const { owners, problems } = tableOwners(root);
  const errors = [...problems];
  const used = new Set();
  for (const path of walk(join(root, 'src'))) {
    const file = toPosix(relative(root, path));
    if (file.startsWith('src/db/')) continue;
    const parts = file.split('/');
    const folder = parts.length > 2 ? parts[1] : '';
    for (const ref of tableReferences(readFileSync(path, 'utf8'), owners)) {
      const owner = owners.get(ref.table);
      if (owner === folder) continue;
      if (allowed.some((e) => allows(e, file, ref.table))) continue;
      const debt = notYetMoved.findIndex((e) => e.file === file && e.table === ref.table);
      if (debt >= 0) {
        used.add(debt);
        continue;
      }
      errors.push(
        `${file}:${ref.line}: ${folder ? `src/${folder}/` : file} ${ref.how} '${ref.table}', a table of src/${owner}/: ` +
          `features use other features' tables only through the owner's functions (add one to src/${owner}/), or put the reference on the allowed list with the reason`,
      );
    }
  }
  const warnings = notYetMoved.filter((_, i) => !used.has(i)).map((e) => `${e.file} no longer touches '${e.table}': remove it from NOT_YET_MOVED`);
  return { errors, warnings };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const at = process.argv.indexOf('--root');
  const root = at > 0 ? process.argv[at + 1] : fileURLToPath(new URL('..', import.meta.url));
  const { errors, warnings } = check(root);
  for (const w of warnings) console.error(`warning: ${w}`);
  for (const e of errors) console.error(e);
  if (errors.length) {
    console.error(`check-table-owners: ${errors.length} reference(s) to another feature's tables`);
    process.exit(1);
  }
  console.error('check-table-owners: every table is used by its owner or through the allowed list');
}
