// bench/contacts: the contacts page at 40,000 contacts (the size bench/panel-api's workspace has),
// over real HTTP to the test server on 127.0.0.1. Contacts only, written straight into the tables in
// batches (deterministic: one seeded generator): a name, one or two addresses, an external id for one
// in four, attributes with a plan and a company. Prints the p95 of GET /v1/contacts for the list's
// first page, a deep page by cursor, and searches: a common term (matches most contacts), a rare one
// (one contact), a company (a few hundred), a full address, and a 2-letter query (too short for trigrams).
// Goals: lists ≤ 20 ms, search ≤ 50 ms.
//
//   npm run build && node dist/bench/contacts/main.js
//   SVC_TEST_DATABASE_URL=postgres://… node dist/bench/contacts/main.js   (Postgres)
//   (BENCH_CONTACTS and BENCH_REQUESTS change the size; BENCH_KEEP=<file> keeps a copy of the SQLite database)
import { CompiledQuery, type Insertable, sql } from 'kysely';
import { memberAccess } from '../../src/auth/access.js';
import { filteredContacts } from '../../src/contacts/list.js';
import type { ContactEmailsTable, ContactExternalIdsTable, ContactsTable } from '../../src/db/schema.js';
import { seedWorkspace } from '../../test/helpers/fixtures.js';
import { startTestServer } from '../../test/helpers/server.js';
import { figure } from '../lib.js';
import { FIRST_NAMES, LAST_NAMES, pick, random } from '../panel-api/text.js';

const CONTACTS = Number(process.env.BENCH_CONTACTS ?? 40_000);
const REQUESTS = Math.min(1000, Number(process.env.BENCH_REQUESTS ?? 100));
const DAY_MS = 86_400_000;
const COMPANIES = Array.from({ length: 120 }, (_, i) => `Company ${String.fromCharCode(65 + (i % 26))}${Math.floor(i / 26)} Ltd`);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
}

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
/** A time-sortable id like newId's, with a counter for the random part (deterministic, unique). */
function id(prefix: string, ms: number, n: number): string {
  let time = '';
  let tail = '';
  for (let i = 0, t = ms; i < 10; i++, t = Math.floor(t / 32)) time = ALPHABET[t % 32] + time;
  for (let i = 0, k = n; i < 16; i++, k = Math.floor(k / 32)) tail = ALPHABET[k % 32] + tail;
  return `${prefix}_${time}${tail}`;
}

async function main() {
  const s = await startTestServer();
  await s.app.jobs.stop();
  const dialect = process.env.SVC_TEST_DATABASE_URL ? 'postgres' : 'sqlite';
  const seed = await seedWorkspace(s.app);
  const rand = random(40);
  const anchor = Date.UTC(2026, 0, 1);
  const t0 = performance.now();
  const BATCH = 1000;
  let rare = '';
  for (let start = 0; start < CONTACTS; start += BATCH) {
    const contacts: Insertable<ContactsTable>[] = [];
    const emails: Insertable<ContactEmailsTable>[] = [];
    const externals: Insertable<ContactExternalIdsTable>[] = [];
    for (let n = start; n < Math.min(CONTACTS, start + BATCH); n++) {
      const created = new Date(anchor - 365 * DAY_MS + Math.floor(((n + rand()) / CONTACTS) * 365 * DAY_MS)).toISOString();
      const first = pick(rand(), FIRST_NAMES);
      const last = pick(rand(), LAST_NAMES);
      const ct = id('ct', Date.parse(created), n);
      const company = pick(rand(), COMPANIES);
      contacts.push({
        id: ct,
        workspace_id: seed.workspaceId,
        name: `${first} ${last}`,
        attributes: JSON.stringify({ plan: pick(rand(), ['free', 'pro', 'enterprise']), company }),
        merged_into_id: null,
        created_at: created,
        updated_at: created,
      });
      const email = `${first}.${last}.${n}@example${n % 50}.com`.toLowerCase();
      emails.push({ workspace_id: seed.workspaceId, email, contact_id: ct, position: 0, created_at: created });
      if (rand() < 0.2)
        emails.push({
          workspace_id: seed.workspaceId,
          email: `${first}${n}@mail${n % 7}.example`.toLowerCase(),
          contact_id: ct,
          position: 1,
          created_at: created,
        });
      if (rand() < 0.25)
        externals.push({ workspace_id: seed.workspaceId, inbox_id: seed.inboxId, external_id: `CRM-${100000 + n}`, contact_id: ct, created_at: created });
      if (n === Math.floor(CONTACTS / 3)) rare = email;
    }
    await s.app.db.transaction().execute(async (trx) => {
      await trx.insertInto('contacts').values(contacts).execute();
      await trx.insertInto('contact_emails').values(emails).execute();
      if (externals.length) await trx.insertInto('contact_external_ids').values(externals).execute();
    });
  }
  await (dialect === 'postgres' ? sql`vacuum analyze` : sql`analyze`).execute(s.app.db);
  figure('dialect', dialect);
  figure('contacts', CONTACTS);
  figure('seed_seconds', (performance.now() - t0) / 1000, 's');
  if (process.env.BENCH_HOLD && dialect === 'postgres') {
    // Postgres: the database stays this many seconds for EXPLAIN by hand, then is dropped as usual.
    figure('database', (await sql<{ d: string }>`select current_database() as d`.execute(s.app.db)).rows[0].d);
    await new Promise((r) => setTimeout(r, Number(process.env.BENCH_HOLD) * 1000));
  }
  if (process.env.BENCH_KEEP && dialect === 'sqlite') {
    await sql`vacuum into ${process.env.BENCH_KEEP}`.execute(s.app.db);
    figure('kept', process.env.BENCH_KEEP);
  }

  const token = seed.apiKey;
  const measure = async (name: string, url: string) => {
    let matches = 0;
    for (let i = 0; i < 5; i++) matches = ((await s.request('GET', url, { token })).body.data ?? []).length; // warm-up
    const times: number[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      const t = performance.now();
      const r = await s.request('GET', url, { token });
      times.push(performance.now() - t);
      if (r.status !== 200) throw new Error(`${url}: ${r.status} ${JSON.stringify(r.body)}`);
    }
    times.sort((a, b) => a - b);
    figure(`${name}_p95`, percentile(times, 0.95), `ms (p50 ${percentile(times, 0.5).toFixed(2)} ms, ${matches} on the page)`);
  };
  if (process.env.BENCH_EXPLAIN) {
    // The plans of the searches below (the profile of issue 42): EXPLAIN ANALYZE on Postgres, EXPLAIN QUERY PLAN on SQLite.
    const access = memberAccess(seed.workspaceId, seed.ownerId, 'owner', 'bench');
    for (const term of ['example', 'company q3', rare, 'quetzalcoatl', 'zq']) {
      const { sql: text, parameters } = filteredContacts(s.app.db, access, { query: term }).orderBy('contacts.id', 'desc').limit(51).compile();
      const explain = dialect === 'postgres' ? 'explain (analyze, costs off)' : 'explain query plan';
      const { rows } = await s.app.db.executeQuery(CompiledQuery.raw(`${explain} ${text}`, [...parameters]));
      figure(`plan ${JSON.stringify(term)}`, `\n  ${(rows as Record<string, string>[]).map((r) => r['QUERY PLAN'] ?? r.detail).join('\n  ')}`);
    }
  }
  const first = (await s.request('GET', '/v1/contacts?limit=50', { token })).body;
  let cursor = first.next_cursor as string;
  for (let i = 0; i < 20 && cursor; i++)
    cursor = (await s.request('GET', `/v1/contacts?limit=50&cursor=${encodeURIComponent(cursor)}`, { token })).body.next_cursor;
  await measure('contacts_list', '/v1/contacts?limit=50');
  await measure('contacts_list_deep', `/v1/contacts?limit=50&cursor=${encodeURIComponent(cursor)}`);
  await measure('contacts_search_common', '/v1/contacts?limit=50&q=example');
  await measure('contacts_search_name', '/v1/contacts?limit=50&q=Elif%20Kaya');
  await measure('contacts_search_company', `/v1/contacts?limit=50&q=${encodeURIComponent('company q3')}`);
  await measure('contacts_search_rare', `/v1/contacts?limit=50&q=${encodeURIComponent(rare)}`);
  await measure('contacts_search_absent', '/v1/contacts?limit=50&q=quetzalcoatl');
  await measure('contacts_search_short', '/v1/contacts?limit=50&q=zq');
  await s.stop();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
