// The end of the dry run: the copy planned from every scanned item (plan.ts) and written slice by slice,
// the summary per folder, and the migration made ready (or paused again).
import { setImmediate as yieldToOthers } from 'node:timers/promises';
import { sql } from 'kysely';
import { countContactEmails } from '../../contacts/imported.js';
import type { Ctx } from '../../context.js';
import { iso } from '../../platform/clock.js';
import { formatMigration } from '../format.js';
import { HELP_DESK_SKIP_REASONS, helpDeskEntryMeta, helpDeskSkipped, isHelpDesk, tagLabels } from '../sources/helpdesk/store.js';
import { loadProgress, lockMigration, logActivity, type MigrationRow, recordMigrationUpdated, SYSTEM, saveMigration } from '../store.js';
import { estimateSeconds, labelOfFolder, labelsOfItem, nodeOf, type PlanItem, planItemsInSlices, SKIP_REASONS, ThreadGrouper } from './plan.js';
import type { ChosenFolder } from './scan.js';
import { teamAddressesOf } from './team.js';

export interface FolderSummary {
  path: string;
  special_use: string | null;
  never_read: boolean;
  messages: number;
  to_copy: number;
  skipped: number;
  duplicates: number;
  label: string | null;
}

export interface PlanSummary {
  total: number;
  to_copy: number;
  conversations: number;
  duplicates: number;
  skipped: Record<string, number>;
  skip_reasons: Record<string, string>;
  folders: FolderSummary[];
  missing_folders: string[];
  contacts_to_create: number;
  labels: string[];
  /** A help desk's tags that become labels: messages to copy and conversations of each. */
  tags: { tag: string; messages: number; conversations: number }[];
  estimated_bytes: number;
  estimated_seconds: number;
  planned_at: string;
}

/** Items read per page, and plan rows written per statement, between two turns of the event loop. */
const PLAN_READ_PAGE = 2000;
const PLAN_ITEMS_PER_UPDATE = 400;
const PLAN_THREADS_PER_INSERT = 300;

/** Whether the migration is still in the scan this plan was made for (else its plan is not written). */
async function stillScanning(ctx: Ctx, m: MigrationRow): Promise<boolean> {
  const row = await ctx.db.selectFrom('mailbox_migrations').select(['state', 'plan_version']).where('id', '=', m.id).executeTakeFirst();
  return row?.state === 'scanning' && row.plan_version === m.plan_version;
}

/**
 * Plans the copy from every scanned item (in memory: one migration's headers) and writes the result:
 * item statuses and threads, the summary, and the state (ready, or paused when the copy had begun).
 *
 * The event loop turns between pages, slices of planning and statements (on SQLite every query runs
 * on the event loop, and one transaction would hold the only connection): a plan of 60,000 messages
 * otherwise kept the server from answering anything for seconds. So the items' statuses and the
 * threads are written slice by slice while the migration is still scanning (nothing reads them as a
 * plan until it is ready, and a scanning migration allows no change but cancel), and one short
 * transaction at the end drops threads no longer planned and makes the migration ready. A run
 * stopped half-way (kill -9) leaves it scanning; the next run plans again from the same rows (only
 * `copied` is read back) and writes every item and thread again, keeping threads' conversations.
 */
export async function finishScan(ctx: Ctx, m: MigrationRow, folders: { chosen: ChosenFolder[]; missing: string[] }): Promise<MigrationRow | undefined> {
  const readable = folders.chosen.filter((f) => !f.neverRead).map((f) => f.path);
  // Items of folders that are no longer chosen leave the plan (copied ones stay on record).
  if (readable.length) {
    await ctx.db
      .deleteFrom('mailbox_migration_items')
      .where('migration_id', '=', m.id)
      .where('status', '!=', 'copied')
      .where('folder', 'not in', readable)
      .execute();
  } else {
    await ctx.db.deleteFrom('mailbox_migration_items').where('migration_id', '=', m.id).where('status', '!=', 'copied').execute();
  }
  // One compact record per message: the plan of a mailbox of 100,000 messages stays small. The
  // references are joined into threads page by page and not kept; a Message-ID is held once (the
  // grouper's), and values many messages repeat (folders, senders, recipient lists, labels) once each.
  const shared = new Map<string, string>();
  const once = (value: string | null): string | null => {
    if (value === null) return null;
    const known = shared.get(value);
    if (known !== undefined) return known;
    shared.set(value, value);
    return value;
  };
  const grouper = new ThreadGrouper();
  const NO_REFS: readonly string[] = [];
  const items: PlanItem[] = [];
  let after: string | undefined;
  for (;;) {
    let q = ctx.db
      .selectFrom('mailbox_migration_items')
      .select(['source_key', 'folder', 'uid', 'rfc_id', 'refs', 'sent_at', 'size', 'from_address', 'recipients', 'automatic', 'status', 'gmail_labels'])
      .where('migration_id', '=', m.id);
    if (after !== undefined) q = q.where('source_key', '>', after);
    const page = await q.orderBy('source_key').limit(PLAN_READ_PAGE).execute();
    for (const r of page) {
      const node = grouper.add(nodeOf(r), r.refs ? (JSON.parse(r.refs) as string[]) : NO_REFS);
      items.push({
        source_key: r.source_key,
        folder: once(r.folder)!,
        uid: r.uid === null ? null : Number(r.uid),
        rfc_id: r.rfc_id === null ? null : grouper.nameOf(node),
        refs: NO_REFS,
        sent_at: r.sent_at,
        size: Number(r.size),
        from_address: once(r.from_address),
        recipients: once(r.recipients),
        automatic: r.automatic === 1,
        status: r.status,
        gmail_labels: once(r.gmail_labels),
      });
    }
    if (page.length < PLAN_READ_PAGE) break;
    after = page[page.length - 1].source_key;
    await yieldToOthers();
  }
  shared.clear();
  const team = await teamAddressesOf(ctx, m);
  const dateTo = m.date_to ? iso(new Date(new Date(m.date_to).getTime() + 86_400_000)) : null;
  const plan = await planItemsInSlices(
    items,
    {
      teamAddresses: team.addresses,
      maxMessageBytes: ctx.config.migration.maxMessageBytes,
      dateFrom: m.date_from ? iso(new Date(m.date_from)) : null,
      dateTo,
      skipAutomatic: m.skip_automatic === 1,
      folderOrder: readable,
    },
    grouper,
  );

  // Summary: every message of the chosen folders counts in the total.
  const labelsByFolder = new Map<string, string | null>();
  const mapping = JSON.parse(m.folder_labels) as Record<string, string | null>;
  for (const f of folders.chosen) labelsByFolder.set(f.path, labelOfFolder(f.path, f.specialUse, f.delimiter, mapping));
  const perFolder = new Map<string, FolderSummary>();
  for (const f of folders.chosen) {
    perFolder.set(f.path, {
      path: f.path,
      special_use: f.specialUse,
      never_read: f.neverRead,
      messages: 0,
      to_copy: 0,
      skipped: 0,
      duplicates: 0,
      label: f.neverRead ? null : (labelsByFolder.get(f.path) ?? null),
    });
  }
  const skipped: Record<string, number> = {};
  let toCopy = 0;
  let duplicates = 0;
  let bytes = 0;
  const labels = new Set<string>();
  const plannedThreads = new Set(plan.threads.filter((t) => t.status === 'planned').map((t) => t.thread_key));
  const senders = new Set<string>();
  for (let index = 0; index < plan.items.length; index++) {
    if (index % 5000 === 4999) await yieldToOthers();
    const p = plan.items[index];
    const item = items[index];
    const fs = perFolder.get(item.folder);
    if (fs) fs.messages++;
    if (p.status === 'planned') {
      toCopy++;
      bytes += item.size;
      if (fs) fs.to_copy++;
      for (const label of labelsOfItem({ folder: item.folder, gmail_labels: item.gmail_labels ?? null }, labelsByFolder, mapping)) labels.add(label);
      if (!p.team && item.from_address) senders.add(item.from_address);
    } else if (p.status === 'duplicate') {
      duplicates++;
      if (fs) fs.duplicates++;
      if (plannedThreads.has(p.thread_key))
        for (const label of labelsOfItem({ folder: item.folder, gmail_labels: item.gmail_labels ?? null }, labelsByFolder, mapping)) labels.add(label);
    } else if (p.status === 'skipped') {
      skipped[p.skip_reason ?? 'other'] = (skipped[p.skip_reason ?? 'other'] ?? 0) + 1;
      if (fs) fs.skipped++;
    }
  }
  for (const t of plan.threads) if (t.status === 'planned' && t.customer_address) senders.add(t.customer_address);
  // A help desk's tags are labels of the conversations whose copied entries carry them.
  const tags = new Map<string, { messages: number; threads: Set<string> }>();
  if (isHelpDesk(m)) {
    const planned = plan.items.flatMap((p, index) =>
      p.status === 'planned' && items[index].uid !== null ? [{ uid: items[index].uid!, thread: p.thread_key }] : [],
    );
    const meta = await helpDeskEntryMeta(
      ctx.db,
      m.id,
      planned.map((p) => p.uid),
    );
    for (const p of planned) {
      for (const tag of new Set(tagLabels(meta.get(p.uid)?.tags ?? []))) {
        let count = tags.get(tag);
        if (!count) tags.set(tag, (count = { messages: 0, threads: new Set() }));
        count.messages++;
        if (p.thread) count.threads.add(p.thread);
        labels.add(tag);
      }
    }
  }
  let existingContacts = 0;
  const addresses = [...senders];
  for (let i = 0; i < addresses.length; i += 500) {
    existingContacts += await countContactEmails(ctx.db, m.workspace_id, addresses.slice(i, i + 500));
  }
  const keepFactor = m.keep_originals ? 2 : 1;
  // A help desk's tickets left out at the source (deleted, spam) are skipped items too.
  const skipReasons: Record<string, string> = { ...SKIP_REASONS };
  if (isHelpDesk(m)) {
    for (const [reason, count] of Object.entries(await helpDeskSkipped(ctx.db, m.id))) {
      skipped[`ticket_${reason}`] = count;
      skipReasons[`ticket_${reason}`] = HELP_DESK_SKIP_REASONS[reason] ?? `tickets the help desk marks ${reason}`;
    }
  }
  const summary: PlanSummary = {
    total: plan.items.length,
    to_copy: toCopy,
    conversations: plannedThreads.size,
    duplicates,
    skipped,
    skip_reasons: skipReasons,
    folders: [...perFolder.values()],
    missing_folders: folders.missing,
    contacts_to_create: addresses.length - existingContacts,
    labels: [...labels].sort(),
    tags: [...tags.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([tag, c]) => ({ tag, messages: c.messages, conversations: c.threads.size })),
    estimated_bytes: bytes * keepFactor,
    estimated_seconds: estimateSeconds(toCopy, bytes),
    planned_at: iso(ctx.clock.now()),
  };

  // Subjects and customer names of the threads, read for their first messages only.
  const wanted = new Set<string>();
  for (const t of plan.threads) {
    wanted.add(items[t.first].source_key);
    if (t.customer !== null) wanted.add(items[t.customer].source_key);
  }
  const names = new Map<string, { subject: string | null; from_name: string | null }>();
  const keys = [...wanted];
  for (let i = 0; i < keys.length; i += 500) {
    const rows = await ctx.db
      .selectFrom('mailbox_migration_items')
      .select(['source_key', 'subject', 'from_name'])
      .where('migration_id', '=', m.id)
      .where('source_key', 'in', keys.slice(i, i + 500))
      .execute();
    for (const r of rows) names.set(r.source_key, { subject: r.subject, from_name: r.from_name });
    await yieldToOthers();
  }

  // Statuses, reasons, threads and team marks of every item, one statement per slice.
  for (let i = 0; i < plan.items.length; i += PLAN_ITEMS_PER_UPDATE) {
    if (!(await stillScanning(ctx, m))) return undefined;
    const chunk = plan.items.slice(i, i + PLAN_ITEMS_PER_UPDATE);
    const values = sql.join(chunk.map((p) => sql`(${p.source_key}, ${p.status}, ${p.skip_reason}, ${p.thread_key}, cast(${p.team ? 1 : 0} as integer))`));
    await sql`update mailbox_migration_items as i
      set status = v.column2, skip_reason = v.column3, thread_key = v.column4, team = v.column5
      from (values ${values}) as v
      where i.migration_id = ${m.id} and i.source_key = v.column1`.execute(ctx.db);
    await yieldToOthers();
  }
  // Threads are written over the ones of an earlier plan: a thread already copied keeps its conversation.
  const staleThreads = new Set(
    (await ctx.db.selectFrom('mailbox_migration_threads').select('thread_key').where('migration_id', '=', m.id).execute()).map((t) => t.thread_key),
  );
  for (let i = 0; i < plan.threads.length; i += PLAN_THREADS_PER_INSERT) {
    if (!(await stillScanning(ctx, m))) return undefined;
    const rows = plan.threads.slice(i, i + PLAN_THREADS_PER_INSERT).map((t) => {
      staleThreads.delete(t.thread_key);
      return {
        migration_id: m.id,
        thread_key: t.thread_key,
        newest_at: t.newest_at,
        messages: t.messages,
        customer_address: t.customer_address,
        customer_name: t.customer !== null ? (names.get(items[t.customer].source_key)?.from_name ?? null) : null,
        subject: names.get(items[t.first].source_key)?.subject ?? null,
        status: t.status,
        skip_reason: t.skip_reason,
        conversation_id: null,
      };
    });
    await ctx.db
      .insertInto('mailbox_migration_threads')
      .values(rows)
      .onConflict((oc) =>
        oc.columns(['migration_id', 'thread_key']).doUpdateSet((eb) => ({
          newest_at: eb.ref('excluded.newest_at'),
          messages: eb.ref('excluded.messages'),
          customer_address: eb.ref('excluded.customer_address'),
          customer_name: eb.ref('excluded.customer_name'),
          subject: eb.ref('excluded.subject'),
          status: eb.ref('excluded.status'),
          skip_reason: eb.ref('excluded.skip_reason'),
        })),
      )
      .execute();
    await yieldToOthers();
  }
  const stale = [...staleThreads];

  return ctx.db.transaction().execute(async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    const current = await lockMigration(trx, m.id);
    if (!current || current.state !== 'scanning' || current.plan_version !== m.plan_version) return undefined;
    for (let i = 0; i < stale.length; i += 500) {
      await trx
        .deleteFrom('mailbox_migration_threads')
        .where('migration_id', '=', m.id)
        .where('thread_key', 'in', stale.slice(i, i + 500))
        .execute();
    }
    const next = current.copy_started_at ? 'paused' : 'ready';
    const saved = await saveMigration(tx, current, { state: next, scanned_version: current.plan_version, summary: JSON.stringify(summary) });
    await logActivity(tx, saved, SYSTEM, 'scan_finished', {
      total: summary.total,
      to_copy: summary.to_copy,
      conversations: summary.conversations,
      skipped: summary.skipped,
      duplicates,
    });
    await recordMigrationUpdated(tx, saved, { migration: formatMigration(saved, await loadProgress(trx, saved.id)) });
    return saved;
  });
}
