// The workspace bench/panel-api measures the panel's answers on: at BENCH_SCALE=1, 1,000,000 message
// rows (mail in and out, notes, status changes) in 150,000 conversations over 5 inboxes, 40,000
// contacts, 30 members, labels, attachments' metadata and ratings, spread over the year before the
// day it was built. The content is deterministic (one seeded generator; ids made from it); the
// workspace, inbox and member rows come from the real services.
//
// Rows are written in bulk straight into the real schema (after the real migrations), as the app
// writes them: the search index by the schema's own triggers, each conversation's preview, activity
// and inbound times as insertMessage moves them, the closing 'event' message changes write, the
// report totals and durations src/reports/statistics.ts keeps, reads per member, mail ids for
// threading. Domain events (the outbox of webhooks and realtime) are not written: nothing listens.
//
// The build is kept and reused: a directory under BENCH_CACHE_DIR (default <tmp>/svc-bench-cache)
// named by VERSION, scale and dialect holds the data dir (the SQLite file) and meta.json (written
// last: no meta, no cache); on Postgres the database svc_bench_<key> on the server of
// SVC_TEST_DATABASE_URL. Change VERSION when the generated content changes.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Insertable, type Kysely, sql } from 'kysely';
import pg from 'pg';
import type { Database } from '../../src/db/schema.js';
import { createInbox } from '../../src/inboxes/service.js';
import { addPerson, seedWorkspace } from '../../test/helpers/fixtures.js';
import { startTestServer } from '../../test/helpers/server.js';
import { FIRST_NAMES, inboundBody, LAST_NAMES, noteBody, pick, random, replyBody, SUBJECTS } from './text.js';

export const VERSION = 1;
const DAY_MS = 86_400_000;
const NOTHING_DUE = '9999-12-31T23:59:59.999Z';
const LABELS = ['billing', 'vip', 'bug', 'refund', 'feature', 'shipping', 'login', 'invoice', 'urgent-customer', 'partner', 'press', 'churn-risk'];

export interface PanelWorkspace {
  version: number;
  scale: number;
  dialect: 'sqlite' | 'postgres';
  /** Start of the UTC day the history ends on (the newest rows are from the day before). */
  anchor: string;
  /** What the server needs to open this data dir and database. */
  env: Record<string, string>;
  workspaceId: string;
  ownerId: string;
  inboxIds: string[];
  memberIds: string[];
  labels: string[];
  /** Conversations spread over the whole history, to open. */
  sample: string[];
  /** Contact names and an address, to search for. */
  contactQueries: string[];
  counts: Record<string, number>;
  buildSeconds: number;
}

export function benchScale(): number {
  const s = Number(process.env.BENCH_SCALE ?? 1);
  if (!(s > 0 && s <= 4)) throw new Error('BENCH_SCALE must be a number in (0, 4]');
  return s;
}

/** The kept workspace of this size and dialect, built first when there is none. */
export async function panelWorkspace(scale = benchScale()): Promise<PanelWorkspace> {
  const adminUrl = process.env.SVC_TEST_DATABASE_URL;
  const dialect = adminUrl ? 'postgres' : 'sqlite';
  const key = `panel_v${VERSION}_s${String(scale).replace('.', '_')}_${dialect}`;
  const dir = path.join(process.env.BENCH_CACHE_DIR ?? path.join(os.tmpdir(), 'svc-bench-cache'), key);
  const metaFile = path.join(dir, 'meta.json');
  if (fs.existsSync(metaFile)) return JSON.parse(fs.readFileSync(metaFile, 'utf8')) as PanelWorkspace;

  fs.rmSync(dir, { recursive: true, force: true });
  const dataDir = path.join(dir, 'data');
  fs.mkdirSync(dataDir, { recursive: true });
  const env: Record<string, string> = {
    SVC_DATA_DIR: dataDir,
    SVC_HTTP_ADDR: '127.0.0.1:0',
    SVC_METRICS_ADDR: '127.0.0.1:0',
    SVC_SMTP_ADDR: '127.0.0.1:0',
    SVC_MASTER_KEY: randomBytes(32).toString('base64'),
    SVC_LOG_LEVEL: 'warn',
  };
  if (adminUrl) {
    const name = `svc_bench_${key}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    env.SVC_DATABASE_URL = url.toString();
  }
  const t0 = performance.now();
  const s = await startTestServer({ testEnv: { env, dataDir, cleanup: async () => {} } });
  await s.app.jobs.stop();
  const seed = await seedWorkspace(s.app, { name: 'Bench panel' });
  const inboxIds = [seed.inboxId];
  for (const name of ['Billing', 'Sales', 'Partners', 'Returns']) inboxIds.push((await createInbox(s.app, { workspaceId: seed.workspaceId, name })).id);
  const memberIds = [seed.ownerId];
  for (let i = 1; i < 30; i++) memberIds.push((await addPerson(s.app, seed.workspaceId, i < 3 ? 'admin' : 'agent', `member${i}@bench.example`)).personId);
  const anchor = new Date(Math.floor(s.clock.now().getTime() / DAY_MS) * DAY_MS);
  const meta: PanelWorkspace = {
    version: VERSION,
    scale,
    dialect,
    anchor: anchor.toISOString(),
    env,
    workspaceId: seed.workspaceId,
    ownerId: seed.ownerId,
    inboxIds,
    memberIds,
    labels: LABELS,
    sample: [],
    contactQueries: [],
    counts: {},
    buildSeconds: 0,
  };
  meta.counts = await generate(s.app.db, meta, anchor.getTime(), (line) => process.stderr.write(`${line}\n`));
  await sql`analyze`.execute(s.app.db);
  await s.stop();
  meta.buildSeconds = Math.round((performance.now() - t0) / 1000);
  fs.writeFileSync(metaFile, JSON.stringify(meta, null, 2));
  return meta;
}

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
let idSeq = 0;
/** A time-sortable id like newId's, with a counter for the random part (deterministic, unique). */
function id(prefix: string, ms: number): string {
  let time = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  let tail = '';
  let n = ++idSeq;
  for (let i = 0; i < 16; i++) {
    tail = ALPHABET[n % 32] + tail;
    n = Math.floor(n / 32);
  }
  return `${prefix}_${time}${tail}`;
}
const iso = (ms: number) => new Date(ms).toISOString();

type Rows = { [T in keyof Database]?: Insertable<Database[T]>[] };

async function insertAll(db: Kysely<Database>, rows: Rows): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const [table, list] of Object.entries(rows) as [keyof Database, Insertable<any>[]][]) {
      if (!list?.length) continue;
      const chunk = Math.max(1, Math.floor(30_000 / Object.keys(list[0]).length));
      for (let i = 0; i < list.length; i += chunk)
        await trx
          .insertInto(table)
          .values(list.slice(i, i + chunk) as any)
          .execute();
    }
  });
}

/** Message rows per conversation: at least 2, averaging `total / conversations`, summing to `total`. */
function lengths(rand: () => number, conversations: number, total: number): number[] {
  const mean = total / conversations;
  const out = Array.from({ length: conversations }, () => 2 + Math.floor(rand() * (2 * mean - 3)));
  let diff = total - out.reduce((a, b) => a + b, 0);
  for (let i = 0; diff !== 0; i = (i + 1) % conversations) {
    if (diff > 0) {
      out[i]++;
      diff--;
    } else if (out[i] > 2) {
      out[i]--;
      diff++;
    }
  }
  return out;
}

async function generate(db: Kysely<Database>, meta: PanelWorkspace, anchorMs: number, log: (line: string) => void): Promise<Record<string, number>> {
  const rand = random(42);
  const ws = meta.workspaceId;
  const C = Math.round(150_000 * meta.scale);
  const M = Math.round(1_000_000 * meta.scale);
  const K = Math.round(40_000 * meta.scale);
  const sizes = lengths(rand, C, M);
  const start = anchorMs - 365 * DAY_MS;
  const counts: Record<string, number> = { conversations: C, messages: M, contacts: 0, attachments: 0, notes: 0, labels: 0, reads: 0 };
  const days = new Map<string, Record<string, number>>();
  const total = (day: string, inbox: string, member: string) => {
    const key = `${day}|${inbox}|${member}`;
    let t = days.get(key);
    if (!t)
      days.set(key, (t = { opened: 0, closed: 0, replies: 0, ratings: 0, rating_sum: 0, rating_1: 0, rating_2: 0, rating_3: 0, rating_4: 0, rating_5: 0 }));
    return t;
  };
  const contacts: { id: string; name: string }[] = [];
  const BATCH = 1000;
  let rows: Rows = {};
  const push = <T extends keyof Database>(table: T, row: Insertable<Database[T]>) => ((rows[table] ??= []) as Insertable<Database[T]>[]).push(row);
  const sampleEvery = Math.max(1, Math.floor(C / 400));

  for (let c = 0; c < C; c++) {
    const created = start + Math.floor(((c + rand()) / C) * (365 * DAY_MS - 2 * 3600_000));
    // A new contact for every C/K conversations; otherwise someone who wrote before (a few often).
    let contact: { id: string; name: string };
    if (Math.ceil(((c + 1) * K) / C) > contacts.length) {
      const n = contacts.length;
      const first = pick(rand(), FIRST_NAMES);
      const last = pick(rand(), LAST_NAMES);
      contact = { id: id('ct', created), name: `${first} ${last}` };
      contacts.push(contact);
      push('contacts', {
        id: contact.id,
        workspace_id: ws,
        name: contact.name,
        attributes: JSON.stringify({ plan: pick(rand(), ['free', 'pro', 'enterprise']) }),
        merged_into_id: null,
        created_at: iso(created),
        updated_at: iso(created),
      });
      const email = `${first}.${last}.${n}@example${n % 50}.com`.toLowerCase();
      push('contact_emails', { workspace_id: ws, email, contact_id: contact.id, position: 0, created_at: iso(created) });
      if (n % Math.max(1, Math.floor(K / 20)) === 7) meta.contactQueries.push(n % 2 ? contact.name : email);
      counts.contacts++;
    } else contact = rand() < 0.1 ? contacts[Math.floor(rand() * Math.min(100, contacts.length))] : contacts[Math.floor(rand() * contacts.length)];

    const inbox = meta.inboxIds[Math.floor(rand() ** 1.5 * meta.inboxIds.length)];
    const age = (anchorMs - created) / (365 * DAY_MS);
    const r = rand();
    const status = age < 0.05 ? (r < 0.45 ? 'open' : r < 0.65 ? 'pending' : 'closed') : r < 0.97 ? 'closed' : r < 0.985 ? 'pending' : 'open';
    const assignee = status === 'open' && rand() < 0.25 ? null : rand() < 0.05 && status !== 'closed' ? null : pick(rand(), meta.memberIds);
    const email = rand() < 0.8;
    const cv = id('cv', created);
    if (c % sampleEvery === sampleEvery - 1) meta.sample.push(cv);
    const n = sizes[c];
    const closer = assignee ?? pick(rand(), meta.memberIds);
    const rows0 = status === 'closed' ? n - 1 : n; // a closed conversation's last row is the change that closed it
    const room = Math.max(60_000, (anchorMs - 60_000 - created) / (n + 1));
    let at = created;
    let lastMessage = created;
    let lastInbound = created;
    let preview = '';
    let firstReply: { at: number; by: string } | null = null;
    const subject = pick(rand(), SUBJECTS);
    const ctFirst = contact.name.split(' ')[0];
    for (let m = 0; m < n; m++) {
      if (m > 0) at += Math.floor(Math.min(room, (m === 1 ? 8 : 30) * 3600_000) * (0.05 + 0.95 * rand()));
      if (m === rows0) {
        // The change that closed it, as applyConversationChanges writes it.
        const changes = { status: { from: 'open', to: 'closed' } };
        push(
          'messages',
          message(ws, cv, id('m', at), at, {
            kind: 'event',
            direction: 'out',
            author_type: 'member',
            author_person_id: closer,
            body: 'status: "open" → "closed"',
            details: JSON.stringify({ changes }),
          }),
        );
        const day = iso(at).slice(0, 10);
        total(day, inbox, closer).closed++;
        push('report_durations', {
          workspace_id: ws,
          day,
          inbox_id: inbox,
          member_id: closer,
          kind: 'resolution',
          conversation_id: cv,
          seconds: Math.round((at - created) / 1000),
          business_seconds: Math.round((at - created) / 1000),
        });
        continue;
      }
      const mid = id('m', at);
      const note = m > 0 && rand() < 0.08;
      const inbound = !note && (m === 0 || rand() < 0.45);
      if (note) {
        push('messages', message(ws, cv, mid, at, { kind: 'note', direction: 'out', author_type: 'member', author_person_id: closer, body: noteBody(rand) }));
        counts.notes++;
        continue;
      }
      const body = inbound ? inboundBody(rand, c) : replyBody(rand, ctFirst);
      const by = inbound ? null : closer;
      const rfc = email ? `${mid}@${inbound ? 'mail.example.com' : 'bench.svc.example'}` : null;
      const headers = email
        ? JSON.stringify({
            message_id: rfc,
            in_reply_to: [],
            references: [],
            from: inbound ? { name: contact.name, address: 'customer@example.com' } : null,
            to: [],
            cc: [],
            subject: m === 0 ? subject : `Re: ${subject}`,
          })
        : null;
      push(
        'messages',
        message(ws, cv, mid, at, {
          kind: 'message',
          direction: inbound ? 'in' : 'out',
          author_type: inbound ? 'contact' : 'member',
          author_person_id: by,
          author_contact_id: inbound ? contact.id : null,
          body,
          subject: email ? (m === 0 ? subject : `Re: ${subject}`) : null,
          delivery_status: !inbound && email ? 'sent' : null,
          sent_at: !inbound && email ? iso(at + 2000) : null,
          mail_message_id: rfc,
          mail_headers: headers,
        }),
      );
      if (rfc) push('mail_ids', { workspace_id: ws, inbox_id: inbox, rfc_id: rfc, conversation_id: cv, message_id: mid, digest: null, created_at: iso(at) });
      if (inbound && rand() < 0.12) {
        const att = id('att', at);
        const pdf = rand() < 0.5;
        push('attachments', {
          id: att,
          workspace_id: ws,
          conversation_id: cv,
          message_id: mid,
          filename: pdf ? `invoice-${c}.pdf` : `photo-${c}.jpg`,
          content_type: pdf ? 'application/pdf' : 'image/jpeg',
          size: 20_000 + Math.floor(rand() * 2_000_000),
          sha256: createHash('sha256').update(att).digest('hex'),
          storage_key: `attachments/bench/${att}`,
          content_id: null,
          inline: 0,
          created_at: iso(at),
        });
        counts.attachments++;
      }
      lastMessage = at;
      preview = body.replace(/\s+/g, ' ').trim().slice(0, 200);
      if (inbound) lastInbound = at;
      else {
        total(iso(at).slice(0, 10), inbox, by!).replies++;
        if (!firstReply) firstReply = { at, by: by! };
      }
    }
    const day = iso(created).slice(0, 10);
    total(day, inbox, '').opened++;
    if (firstReply) {
      const d = iso(firstReply.at).slice(0, 10);
      const secs = Math.round((firstReply.at - created) / 1000);
      push('report_durations', {
        workspace_id: ws,
        day: d,
        inbox_id: inbox,
        member_id: firstReply.by,
        kind: 'first_response',
        conversation_id: cv,
        seconds: secs,
        business_seconds: secs,
      });
    }
    const rated = status === 'closed' && rand() < 0.3;
    const score = 1 + Math.floor(rand() * 5);
    const ratedAt = Math.min(anchorMs - 1000, at + 3600_000);
    if (rated) {
      const t = total(iso(ratedAt).slice(0, 10), inbox, assignee ?? '');
      t.ratings++;
      t.rating_sum += score;
      t[`rating_${score}`]++;
    }
    const snoozed = status === 'open' && rand() < 0.05;
    push('conversations', {
      id: cv,
      workspace_id: ws,
      inbox_id: inbox,
      contact_id: contact.id,
      channel_id: null,
      source: email ? 'email' : 'chat',
      status,
      assignee_id: status === 'closed' ? closer : assignee,
      priority: pick(rand(), [null, null, null, null, 'low', 'medium', 'high', 'urgent'] as const),
      subject: email ? subject : null,
      spam: rand() < 0.005 ? 1 : 0,
      imported: 0,
      imported_at: null,
      created_at: iso(created),
      updated_at: iso(at),
      last_message_at: iso(lastMessage),
      preview,
      last_inbound_at: iso(lastInbound),
      rating_score: rated ? score : null,
      rating_comment: rated && score < 3 ? 'Took too long.' : null,
      rated_at: rated ? iso(ratedAt) : null,
      snoozed_at: snoozed ? iso(lastMessage) : null,
      snoozed_until: null,
      sla: null,
      sla_due_at: NOTHING_DUE,
    });
    const nLabels = rand() < 0.65 ? 0 : rand() < 0.7 ? 1 : 2;
    for (const label of new Set(Array.from({ length: nLabels }, () => pick(rand(), LABELS)))) {
      push('conversation_labels', { conversation_id: cv, label });
      counts.labels++;
    }
    // The assignee opened it after the latest activity, except a third of what is still open.
    const who = status === 'closed' ? closer : assignee;
    if (who && !(status !== 'closed' && rand() < 0.33)) {
      push('conversation_reads', { conversation_id: cv, person_id: who, read_at: iso(at + 60_000 > anchorMs ? at : at + 60_000) });
      counts.reads++;
    }
    if ((c + 1) % BATCH === 0 || c === C - 1) {
      // Contacts and conversations before the rows that refer to them.
      const { contacts: cs, contact_emails, conversations, ...rest } = rows;
      await insertAll(db, { contacts: cs, contact_emails, conversations, ...rest });
      rows = {};
      if ((c + 1) % (BATCH * 10) === 0) log(`panel workspace: ${c + 1}/${C} conversations`);
    }
  }
  const dayRows = [...days].map(([key, t]) => {
    const [day, inbox_id, member_id] = key.split('|');
    return { workspace_id: ws, day, inbox_id, member_id, ...t };
  });
  await insertAll(db, { report_days: dayRows });
  return counts;
}

function message(
  ws: string,
  cv: string,
  mid: string,
  at: number,
  m: Partial<Insertable<Database['messages']>> & Pick<Insertable<Database['messages']>, 'kind' | 'direction' | 'author_type' | 'body'>,
): Insertable<Database['messages']> {
  return {
    id: mid,
    workspace_id: ws,
    conversation_id: cv,
    author_person_id: null,
    author_key_id: null,
    author_contact_id: null,
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
    mail_headers: null,
    attachments_omitted: 0,
    raw_storage_key: null,
    raw_size: null,
    raw_sha256: null,
    raw_stored_at: null,
    created_at: iso(at),
    imported_at: null,
    ...m,
  };
}
