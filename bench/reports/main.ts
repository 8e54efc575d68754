// bench/reports: GET /v1/reports answer time on a workspace of 1,000,000 messages (100,000
// conversations over the last year, 2 inboxes, 5 members, a rating on 30 % of them). The messages
// and conversations are written straight into the tables in batches, with the report totals the
// event reactions would have kept for them (src/reports/statistics.ts), so the answer is read the
// way the server reads it. Prints p50/p95 for a 30-day and a 365-day report, all inboxes and one
// member. Goal: p95 ≤ 200 ms on SQLite and Postgres.
//
//   npm run build && node dist/bench/reports/main.js
//   SVC_TEST_DATABASE_URL=postgres://… node dist/bench/reports/main.js   (Postgres)
//   (BENCH_MESSAGES and BENCH_REQUESTS change the size)
import type { Insertable } from 'kysely';
import type { ContactsTable, ConversationsTable, MessagesTable } from '../../src/db/schema.js';
import { createInbox } from '../../src/inboxes/service.js';
import { newId } from '../../src/platform/ids.js';
import { addPerson, seedWorkspace } from '../../test/helpers/fixtures.js';
import { startTestServer } from '../../test/helpers/server.js';
import { figure } from '../lib.js';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 1_000_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 40);
const PER_CONVERSATION = 10;
const DAY_MS = 86_400_000;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
}

/** A small deterministic generator, so that runs are comparable. */
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
  const second = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Sales' });
  const inboxIds = [seed.inboxId, second.id];
  const members = [seed.ownerId];
  for (let i = 0; i < 4; i++) members.push((await addPerson(s.app, seed.workspaceId, 'agent')).personId);
  const now = Date.now();
  const rand = random(42);
  const conversations = Math.ceil(MESSAGES / PER_CONVERSATION);

  const days = new Map<string, Record<string, number>>();
  const total = (day: string, inbox: string, member: string) => {
    const key = `${day}|${inbox}|${member}`;
    let t = days.get(key);
    if (!t)
      days.set(key, (t = { opened: 0, closed: 0, replies: 0, ratings: 0, rating_sum: 0, rating_1: 0, rating_2: 0, rating_3: 0, rating_4: 0, rating_5: 0 }));
    return t;
  };
  const durations: {
    workspace_id: string;
    day: string;
    inbox_id: string;
    member_id: string;
    kind: 'first_response' | 'resolution';
    conversation_id: string;
    seconds: number;
  }[] = [];

  const t0 = performance.now();
  const BATCH_CONVERSATIONS = 50; // 500 messages per insert
  for (let start = 0; start < conversations; start += BATCH_CONVERSATIONS) {
    const contacts: Insertable<ContactsTable>[] = [];
    const convs: Insertable<ConversationsTable>[] = [];
    const msgs: Insertable<MessagesTable>[] = [];
    for (let c = start; c < Math.min(conversations, start + BATCH_CONVERSATIONS); c++) {
      const created = new Date(now - Math.floor(rand() * 365 * DAY_MS));
      const inbox = inboxIds[c % 2];
      const member = members[c % members.length];
      const ct = newId('ct', created.getTime());
      const cv = newId('cv', created.getTime());
      const firstResponse = 60 + Math.floor(rand() * 8 * 3600);
      const resolution = firstResponse + Math.floor((rand() * 3 * DAY_MS) / 1000);
      const closedAt = new Date(created.getTime() + resolution * 1000);
      const iso = created.toISOString();
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
        id: cv,
        workspace_id: seed.workspaceId,
        inbox_id: inbox,
        contact_id: ct,
        channel_id: null,
        source: 'email' as const,
        status: 'closed' as const,
        assignee_id: member,
        priority: null,
        subject: `Order ${c}`,
        spam: 0,
        imported: 0,
        imported_at: null,
        created_at: iso,
        updated_at: closedAt.toISOString(),
        last_message_at: closedAt.toISOString(),
      });
      for (let m = 0; m < PER_CONVERSATION; m++) {
        const at = new Date(created.getTime() + (m === 0 ? 0 : firstResponse * 1000 + (m - 1) * 600_000));
        const out = m % 2 === 1;
        msgs.push({
          id: newId('m', at.getTime()),
          workspace_id: seed.workspaceId,
          conversation_id: cv,
          kind: 'message' as const,
          direction: out ? ('out' as const) : ('in' as const),
          author_type: out ? ('member' as const) : ('contact' as const),
          author_person_id: out ? member : null,
          author_key_id: null,
          author_contact_id: out ? null : ct,
          body: out ? 'Thanks, we are on it.' : 'Hello, a question about my order.',
          html: null,
          subject: null,
          automatic: 0,
          details: null,
          delivery_status: null,
          delivery_error: null,
          delivery_attempts: 0,
          sent_at: null,
          mail_message_id: null,
          mail_references: null,
          mail_reply_to: null,
          attachments_omitted: 0,
          raw_storage_key: null,
          raw_size: null,
          raw_sha256: null,
          raw_stored_at: null,
          created_at: at.toISOString(),
        });
      }
      // The totals the reactions keep for this history.
      const day = iso.slice(0, 10);
      const firstDay = new Date(created.getTime() + firstResponse * 1000).toISOString().slice(0, 10);
      const closeDay = closedAt.toISOString().slice(0, 10);
      total(day, inbox, '').opened++;
      total(firstDay, inbox, member).replies += PER_CONVERSATION / 2;
      total(closeDay, inbox, member).closed++;
      durations.push({
        workspace_id: seed.workspaceId,
        day: firstDay,
        inbox_id: inbox,
        member_id: member,
        kind: 'first_response',
        conversation_id: cv,
        seconds: firstResponse,
      });
      durations.push({
        workspace_id: seed.workspaceId,
        day: closeDay,
        inbox_id: inbox,
        member_id: member,
        kind: 'resolution',
        conversation_id: cv,
        seconds: resolution,
      });
      if (rand() < 0.3) {
        const score = 1 + Math.floor(rand() * 5);
        const t = total(closeDay, inbox, member);
        t.ratings++;
        t.rating_sum += score;
        t[`rating_${score}`]++;
      }
    }
    await s.app.db.transaction().execute(async (trx) => {
      await trx.insertInto('contacts').values(contacts).execute();
      await trx.insertInto('conversations').values(convs).execute();
      await trx.insertInto('messages').values(msgs).execute();
    });
  }
  const rows = [...days].map(([key, t]) => {
    const [day, inbox_id, member_id] = key.split('|');
    return { workspace_id: seed.workspaceId, day, inbox_id, member_id, ...t };
  });
  for (let i = 0; i < rows.length; i += 500)
    await s.app.db
      .insertInto('report_days')
      .values(rows.slice(i, i + 500))
      .execute();
  for (let i = 0; i < durations.length; i += 1000)
    await s.app.db
      .insertInto('report_durations')
      .values(durations.slice(i, i + 1000))
      .execute();
  figure(`${dialect}_seed_seconds`, (performance.now() - t0) / 1000, 's');
  figure(`${dialect}_messages`, conversations * PER_CONVERSATION);
  figure(`${dialect}_report_day_rows`, rows.length);
  figure(`${dialect}_report_duration_rows`, durations.length);

  const to = new Date(now).toISOString().slice(0, 10);
  const cases: [string, string][] = [
    ['30_days', `from=${new Date(now - 29 * DAY_MS).toISOString().slice(0, 10)}&to=${to}`],
    ['365_days', `from=${new Date(now - 364 * DAY_MS).toISOString().slice(0, 10)}&to=${to}`],
    ['365_days_one_member', `from=${new Date(now - 364 * DAY_MS).toISOString().slice(0, 10)}&to=${to}&member_id=${members[1]}`],
  ];
  for (const [name, query] of cases) {
    const times: number[] = [];
    for (let i = 0; i < REQUESTS + 3; i++) {
      const t = performance.now();
      const r = await s.request('GET', `/v1/reports?${query}`, { token: seed.apiKey });
      if (r.status !== 200) throw new Error(`report answered ${r.status}: ${JSON.stringify(r.body)}`);
      if (i >= 3) times.push(performance.now() - t); // the first answers warm the caches
    }
    times.sort((a, b) => a - b);
    figure(`${dialect}_report_${name}_p50`, percentile(times, 0.5), 'ms');
    figure(`${dialect}_report_${name}_p95`, percentile(times, 0.95), 'ms');
  }
  await s.stop();
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
