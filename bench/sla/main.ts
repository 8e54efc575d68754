// bench/sla: GET /v1/conversations?status=open&sort=sla_due answer time at 100,000 open
// conversations (one inbox, SLA state on 80 % of them, 5 % snoozed, due times spread over the past
// and next week), over real HTTP to the test server on 127.0.0.1. The rows are written straight into
// the tables in batches, with the SLA state and due time the reaction would have stored. Prints
// p50/p95 for the first page, a page deep in the list (by cursor) and, as a floor, the same list by
// latest activity. Goal: p95 ≤ 50 ms.
//
//   npm run build && node dist/bench/sla/main.js
//   SVC_TEST_DATABASE_URL=postgres://… node dist/bench/sla/main.js   (Postgres)
//   (BENCH_CONVERSATIONS and BENCH_REQUESTS change the size; the loop is bounded by them)
import { type Insertable, sql } from 'kysely';
import type { ContactsTable, ConversationsTable } from '../../src/db/schema.js';
import { newId } from '../../src/platform/ids.js';
import { NOTHING_DUE } from '../../src/sla/engine.js';
import { seedWorkspace } from '../../test/helpers/fixtures.js';
import { startTestServer } from '../../test/helpers/server.js';
import { figure } from '../lib.js';

const CONVERSATIONS = Number(process.env.BENCH_CONVERSATIONS ?? 100_000);
const REQUESTS = Math.min(1000, Number(process.env.BENCH_REQUESTS ?? 200));
const DAY_MS = 86_400_000;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
}

function random(seed: number) {
  let x = seed;
  return () => {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
    return x / 2_147_483_648;
  };
}

async function main() {
  const s = await startTestServer();
  await s.app.jobs.stop();
  const dialect = process.env.SVC_TEST_DATABASE_URL ? 'postgres' : 'sqlite';
  const seed = await seedWorkspace(s.app);
  const now = Date.now();
  const rand = random(35);
  const t0 = performance.now();
  const BATCH = 500;
  for (let start = 0; start < CONVERSATIONS; start += BATCH) {
    const contacts: Insertable<ContactsTable>[] = [];
    const convs: Insertable<ConversationsTable>[] = [];
    for (let c = start; c < Math.min(CONVERSATIONS, start + BATCH); c++) {
      const created = new Date(now - Math.floor(rand() * 30 * DAY_MS));
      const iso = created.toISOString();
      const ct = newId('ct', created.getTime());
      const hasSla = rand() < 0.8;
      const due = new Date(now + Math.floor((rand() - 0.3) * 7 * DAY_MS)).toISOString();
      const target = {
        started_at: iso,
        minutes: 120,
        paused_ms: 0,
        paused_at: null,
        due_at: due,
        warn_at: due,
        warned_at: null,
        breached_at: null,
        met_at: null,
      };
      const snoozed = rand() < 0.05;
      contacts.push({
        id: ct,
        workspace_id: seed.workspaceId,
        name: `Customer ${c}`,
        attributes: '{}',
        merged_into_id: null,
        created_at: iso,
        updated_at: iso,
      });
      convs.push({
        id: newId('cv', created.getTime()),
        workspace_id: seed.workspaceId,
        inbox_id: seed.inboxId,
        contact_id: ct,
        channel_id: null,
        source: 'email',
        status: 'open',
        assignee_id: null,
        priority: null,
        subject: `Order ${c}`,
        spam: 0,
        imported: 0,
        created_at: iso,
        updated_at: iso,
        last_message_at: iso,
        preview: 'Hello, a question about my order.',
        snoozed_at: snoozed ? iso : null,
        sla: hasSla ? JSON.stringify({ responded: false, first_response: target, next_response: null, resolution: null }) : null,
        sla_due_at: hasSla ? due : NOTHING_DUE,
      });
    }
    await s.app.db.transaction().execute(async (trx) => {
      await trx.insertInto('contacts').values(contacts).execute();
      await trx.insertInto('conversations').values(convs).execute();
    });
  }
  // What autovacuum does for a table this size in real life: fresh statistics for the planner.
  if (dialect === 'postgres') await sql`analyze conversations`.execute(s.app.db);
  figure(`${dialect}_seed_seconds`, (performance.now() - t0) / 1000, 's');
  figure(`${dialect}_open_conversations`, CONVERSATIONS);

  const path = '/v1/conversations?status=open&sort=sla_due&limit=50';
  // A cursor deep in the list: the 40th page.
  let cursor: string | null = null;
  for (let i = 0; i < 40; i++) {
    const r: { body: { next_cursor: string | null } } = await s.request('GET', `${path}${cursor ? `&cursor=${cursor}` : ''}`, { token: seed.apiKey });
    cursor = r.body.next_cursor;
  }
  // The floor: the same list in the panel's usual order (latest activity), same rows, same answer shape.
  for (const [name, url] of [
    ['first_page', path],
    ['page_40', `${path}&cursor=${cursor}`],
    ['activity_floor', '/v1/conversations?status=open&sort=activity&limit=50'],
  ] as const) {
    for (let i = 0; i < 10; i++) await s.request('GET', url, { token: seed.apiKey }); // warm-up
    const times: number[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      const t = performance.now();
      const r = await s.request('GET', url, { token: seed.apiKey });
      times.push(performance.now() - t);
      if (r.status !== 200) throw new Error(`${url}: ${r.status}`);
    }
    times.sort((a, b) => a - b);
    figure(`${dialect}_sla_due_${name}_p50`, percentile(times, 0.5), 'ms');
    figure(`${dialect}_sla_due_${name}_p95`, percentile(times, 0.95), 'ms');
  }
  await s.stop();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
