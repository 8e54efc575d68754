// bench/views: saved views at 200,000 conversations (three inboxes; open, pending and closed; five
// assignees and none; priorities, labels, SLA due times and snoozes spread as a busy help desk has
// them), over real HTTP to the test server on 127.0.0.1. Rows are written straight into the tables in
// batches (the generator of bench/sla, widened). Prints the p95 of GET /v1/conversations?view= for a
// 5-condition view (goal ≤ 50 ms) and of GET /v1/views/counts for a sidebar of eight views (goal ≤ 100 ms).
//
//   npm run build && node dist/bench/views/main.js
//   SVC_TEST_DATABASE_URL=postgres://… node dist/bench/views/main.js   (Postgres)
//   (BENCH_CONVERSATIONS and BENCH_REQUESTS change the size; the loop is bounded by them)
import { type Insertable, sql } from 'kysely';
import type { ContactsTable, ConversationLabelsTable, ConversationsTable } from '../../src/db/schema.js';
import { createInbox } from '../../src/inboxes/service.js';
import { newId } from '../../src/platform/ids.js';
import { NOTHING_DUE } from '../../src/sla/engine.js';
import { addPerson, seedWorkspace } from '../../test/helpers/fixtures.js';
import { startTestServer } from '../../test/helpers/server.js';
import { figure } from '../lib.js';

const CONVERSATIONS = Number(process.env.BENCH_CONVERSATIONS ?? 200_000);
const REQUESTS = Math.min(1000, Number(process.env.BENCH_REQUESTS ?? 100));
const DAY_MS = 86_400_000;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
}

/** mulberry32: consecutive draws independent enough that combined conditions match as often as they would. */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

async function main() {
  const s = await startTestServer();
  await s.app.jobs.stop();
  const dialect = process.env.SVC_TEST_DATABASE_URL ? 'postgres' : 'sqlite';
  const seed = await seedWorkspace(s.app);
  const inboxes = [seed.inboxId];
  for (const name of ['Billing', 'Sales']) inboxes.push((await createInbox(s.app, { workspaceId: seed.workspaceId, name })).id);
  const people = [seed.ownerId];
  for (let i = 0; i < 4; i++) people.push((await addPerson(s.app, seed.workspaceId, 'agent')).personId);
  const LABELS = ['billing', 'vip', 'bug', 'refund', 'feature', 'spam-ish'];
  const pick = <T>(r: number, xs: readonly T[]) => xs[Math.floor(r * xs.length)];
  const now = Date.now();
  const rand = random(37);
  const t0 = performance.now();
  const BATCH = 500;
  for (let start = 0; start < CONVERSATIONS; start += BATCH) {
    const contacts: Insertable<ContactsTable>[] = [];
    const convs: Insertable<ConversationsTable>[] = [];
    const labels: Insertable<ConversationLabelsTable>[] = [];
    for (let c = start; c < Math.min(CONVERSATIONS, start + BATCH); c++) {
      // Older conversations are mostly closed, as in a help desk that has run for a year.
      const age = rand();
      const created = new Date(now - Math.floor(age * 365 * DAY_MS));
      const iso = created.toISOString();
      const last = new Date(Math.min(now, created.getTime() + Math.floor(rand() * 3 * DAY_MS))).toISOString();
      const r = rand();
      const status = age > 0.1 ? (r < 0.9 ? 'closed' : r < 0.95 ? 'pending' : 'open') : r < 0.5 ? 'open' : r < 0.7 ? 'pending' : 'closed';
      const ct = newId('ct', created.getTime());
      const id = newId('cv', created.getTime());
      const due = status === 'closed' || rand() < 0.2 ? NOTHING_DUE : new Date(now + Math.floor((rand() - 0.3) * 2 * DAY_MS)).toISOString();
      contacts.push({
        id: ct,
        workspace_id: seed.workspaceId,
        name: `Customer ${c}`,
        attributes: JSON.stringify({ plan: pick(rand(), ['free', 'pro', 'enterprise']) }),
        merged_into_id: null,
        created_at: iso,
        updated_at: iso,
      });
      convs.push({
        id,
        workspace_id: seed.workspaceId,
        inbox_id: pick(rand(), inboxes),
        contact_id: ct,
        channel_id: null,
        source: rand() < 0.7 ? 'email' : 'chat',
        status,
        assignee_id: rand() < 0.3 ? null : pick(rand(), people),
        priority: pick(rand(), [null, null, null, 'low', 'medium', 'high', 'urgent'] as const),
        subject: `Order ${c}`,
        spam: rand() < 0.01 ? 1 : 0,
        imported: 0,
        created_at: iso,
        updated_at: last,
        last_message_at: last,
        preview: 'Hello, a question about my order.',
        snoozed_at: status === 'open' && rand() < 0.05 ? last : null,
        sla: null,
        sla_due_at: due,
      });
      const n = rand() < 0.6 ? 0 : rand() < 0.7 ? 1 : 2;
      for (const l of new Set(Array.from({ length: n }, () => pick(rand(), LABELS)))) labels.push({ conversation_id: id, label: l });
    }
    await s.app.db.transaction().execute(async (trx) => {
      await trx.insertInto('contacts').values(contacts).execute();
      await trx.insertInto('conversations').values(convs).execute();
      if (labels.length) await trx.insertInto('conversation_labels').values(labels).execute();
    });
  }
  // Postgres: vacuumed as autovacuum would have done after so many inserts (index-only scans need
  // the visibility map; a freshly written table has none).
  await (dialect === 'postgres' ? sql`vacuum analyze` : sql`analyze`).execute(s.app.db);
  figure('dialect', dialect);
  figure('conversations', CONVERSATIONS);
  figure('seed_seconds', (performance.now() - t0) / 1000, 's');

  const token = seed.ownerToken;
  const make = async (name: string, filters: object, shared = true) => {
    const r = await s.request('POST', '/v1/views', { token, body: { name, filters, shared } });
    if (r.status !== 201) throw new Error(`view ${name}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.id as string;
  };
  const five = await make('Billing urgent, unassigned', {
    status: ['open'],
    inbox_id: [inboxes[1]],
    assignee_id: ['none'],
    priority: ['high', 'urgent'],
    label: { any: ['billing', 'refund'] },
  });
  await make('Mine', { status: ['open'], assignee_id: ['me'] }, false);
  await make('Unassigned', { status: ['open'], assignee_id: ['none'] });
  await make('Breached', { status: ['open', 'pending'], sla: 'breached' });
  await make('Urgent', { status: ['open'], priority: ['urgent'] });
  await make('VIP', { status: ['open', 'pending'], label: { any: ['vip'] } });
  await make('Snoozed', { snoozed: true });
  await make('New this week, chat', { status: ['open'], channel_kind: ['chat'], created: { after: new Date(now - 7 * DAY_MS).toISOString() } });

  const measure = async (name: string, url: string) => {
    for (let i = 0; i < 10; i++) await s.request('GET', url, { token }); // warm-up
    const times: number[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      const t = performance.now();
      const r = await s.request('GET', url, { token });
      times.push(performance.now() - t);
      if (r.status !== 200) throw new Error(`${url}: ${r.status}`);
    }
    times.sort((a, b) => a - b);
    figure(`${name}_p50`, percentile(times, 0.5), 'ms');
    figure(name === 'view_list' ? 'view_list_p95' : name, percentile(times, 0.95), 'ms');
  };
  if (process.env.BENCH_KEEP && dialect === 'sqlite') {
    // A copy of the database to study the plans (EXPLAIN QUERY PLAN) without seeding again.
    await sql`vacuum into ${process.env.BENCH_KEEP}`.execute(s.app.db);
    figure('kept', process.env.BENCH_KEEP);
  }
  await measure('view_list', `/v1/conversations?view=${five}&limit=50`);
  await measure('view_counts', '/v1/views/counts');
  const counts = (await s.request('GET', '/v1/views/counts', { token })).body.data as { id: string; count: number }[];
  figure('five_condition_view_matches', counts.find((c) => c.id === five)?.count ?? -1);
  figure('sidebar_view_matches', counts.map((c) => c.count).join(' '));
  await s.stop();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
