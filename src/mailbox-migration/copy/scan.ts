// The dry run: headers only are read (BODY.PEEK[HEADER.FIELDS …], flags, dates, sizes), folder by
// folder in UID order, with the resume point stored after every chunk, so a restart continues where
// it stopped. When every chosen folder is read, the copy is planned (plan.ts) and the migration is
// ready (or paused again, when the plan was changed during a pause).
import { setImmediate as yieldToOthers } from 'node:timers/promises';
import { sql } from 'kysely';
import { countContactEmails } from '../../contacts/imported.js';
import { normalizeAddress } from '../../contacts/service.js';
import type { Ctx } from '../../context.js';
import { placeholders, runText } from '../../db/bulk.js';
import type { MailboxMigrationItemsTable } from '../../db/schema.js';
import { AUTOMATIC_HEADER_FIELDS, type InboundMail, parseHeaderBlock } from '../../mail/parse.js';
import { iso } from '../../platform/clock.js';
import { formatMigration } from '../format.js';
import { HELP_DESK_SKIP_REASONS, helpDeskEntryMeta, helpDeskSkipped, isHelpDesk, tagLabels } from '../sources/helpdesk/store.js';
import type { HeaderFetch, ImapFolder } from '../sources/imap.js';
import type { MailSource } from '../sources/mail-source.js';
import { findPreset } from '../sources/presets.js';
import { loadProgress, lockMigration, logActivity, type MigrationRow, recordMigrationUpdated, SYSTEM, saveMigration } from '../store.js';
import {
  estimateSeconds,
  labelOfFolder,
  labelsOfItem,
  NEVER_READ_SPECIAL_USE,
  nodeOf,
  type PlanItem,
  planItemsInSlices,
  SKIP_REASONS,
  ThreadGrouper,
} from './plan.js';
import { teamAddressesOf } from './team.js';

/** Header fields a scan reads: threading, parties, subject, date, and every one that marks automatic mail. */
export const SCAN_HEADER_FIELDS: string[] = [
  ...new Set(['message-id', 'in-reply-to', 'references', 'from', 'reply-to', 'to', 'cc', 'subject', 'date', ...AUTOMATIC_HEADER_FIELDS]),
];

/** UIDs asked for per FETCH while scanning. */
const SCAN_CHUNK = 1000;

export interface ChosenFolder extends ImapFolder {
  neverRead: boolean;
}

export function isNeverRead(folder: Pick<ImapFolder, 'specialUse'>): boolean {
  return !!folder.specialUse && NEVER_READ_SPECIAL_USE.has(folder.specialUse);
}

/** The folders a migration reads: the chosen ones, else the inbox, sent mail and the provider's defaults. */
export function chooseFolders(m: Pick<MigrationRow, 'folders' | 'provider'>, all: readonly ImapFolder[]): { chosen: ChosenFolder[]; missing: string[] } {
  const byPath = new Map(all.map((f) => [f.path, f]));
  let wanted: string[];
  if (m.folders) wanted = JSON.parse(m.folders) as string[];
  else {
    const defaults = new Set<string>();
    // An export file: every folder (those never read are left out when reading).
    const everything = findPreset(m.provider)?.kind === 'export_file';
    // Gmail through a Google sign-in: All Mail (whatever its name in the account's language) holds
    // every message once, its labels come with X-GM-LABELS; label folders would only repeat it.
    const allMail = m.provider === 'google' ? all.find((f) => f.specialUse === '\\All' && !f.noSelect) : undefined;
    if (allMail) defaults.add(allMail.path);
    else {
      for (const f of all) if (everything || f.path.toUpperCase() === 'INBOX' || f.specialUse === '\\Sent') defaults.add(f.path);
      for (const p of findPreset(m.provider)?.default_folders ?? []) if (byPath.has(p)) defaults.add(p);
    }
    wanted = [...defaults];
  }
  const chosen: ChosenFolder[] = [];
  const missing: string[] = [];
  for (const path of wanted) {
    const f = byPath.get(path) ?? (path.toUpperCase() === 'INBOX' ? all.find((x) => x.path.toUpperCase() === 'INBOX') : undefined);
    if (!f || f.noSelect) missing.push(path);
    else if (!chosen.some((c) => c.path === f.path)) chosen.push({ ...f, neverRead: isNeverRead(f) });
  }
  // The inbox first: a message in several folders is kept from the first one.
  chosen.sort((a, b) => Number(b.path.toUpperCase() === 'INBOX') - Number(a.path.toUpperCase() === 'INBOX'));
  return { chosen, missing };
}

export function sourceKey(folder: string, uidValidity: string, uid: number): string {
  return `imap:${uidValidity}:${uid}:${folder}`;
}

function cleanAddress(raw: string | null | undefined): string | null {
  if (!raw) return null;
  try {
    return normalizeAddress(raw);
  } catch {
    return null;
  }
}

export type HeaderParser = (headers: Buffer) => Promise<InboundMail>;

/** What the scan stores of one message, from its header block. */
export async function itemFromHeaders(
  input: {
    migrationId: string;
    sourceKey: string;
    folder: string;
    uid: number | null;
    headers: Buffer;
    size: number;
    internalDate: Date | null;
    flags: string[];
    gmailLabels?: string[];
  },
  parse: HeaderParser = parseHeaderBlock,
): Promise<MailboxMigrationItemsTable> {
  const mail = await parse(input.headers);
  // The Date header, unless missing or absurd (then the server's receipt time).
  const received = input.internalDate && !Number.isNaN(input.internalDate.getTime()) ? input.internalDate : null;
  let sent = mail.date;
  if (!sent || sent.getTime() < Date.UTC(1980, 0, 1) || (received && sent.getTime() > received.getTime() + 2 * 86_400_000)) sent = received ?? sent;
  const refs = [...new Set([...mail.inReplyTo, ...mail.references])].filter((r) => r !== mail.messageId);
  const recipients = [...new Set(mail.headerRecipients.map(cleanAddress).filter((a): a is string => !!a))];
  return {
    migration_id: input.migrationId,
    source_key: input.sourceKey,
    folder: input.folder,
    uid: input.uid,
    rfc_id: mail.messageId,
    refs: refs.length ? JSON.stringify(refs.slice(0, 100)) : null,
    thread_key: null,
    sent_at: iso(sent ?? new Date(0)),
    size: input.size,
    from_address: cleanAddress(mail.from.address),
    from_name: mail.from.name,
    recipients: recipients.length ? JSON.stringify(recipients.slice(0, 100)) : null,
    subject: mail.subject ? mail.subject.slice(0, 500) : null,
    flags: input.flags.length ? JSON.stringify(input.flags) : null,
    gmail_labels: input.gmailLabels?.length ? JSON.stringify(input.gmailLabels.slice(0, 200)) : null,
    automatic: mail.automatic ? 1 : 0,
    team: 0,
    status: 'planned',
    skip_reason: null,
    error: null,
    attempts: 0,
    message_id: null,
    conversation_id: null,
    copied_at: null,
  };
}

/** The columns a scanned item is written with: all but `new_mail`, which keeps its default (history). */
const SCANNED_ITEM_COLUMNS = [
  'migration_id',
  'source_key',
  'folder',
  'uid',
  'rfc_id',
  'refs',
  'thread_key',
  'sent_at',
  'size',
  'from_address',
  'from_name',
  'recipients',
  'subject',
  'flags',
  'gmail_labels',
  'automatic',
  'team',
  'status',
  'skip_reason',
  'error',
  'attempts',
  'message_id',
  'conversation_id',
  'copied_at',
] as const satisfies readonly Exclude<keyof MailboxMigrationItemsTable, 'new_mail'>[];
const ITEMS_PER_INSERT = 200;

/**
 * Scanned items, 200 per statement (one already stored is left as it is). The statement's text is
 * built once per row count (runText): built with the query builder, its 4,800 values cost the scan
 * more main-thread time (and garbage) than SQLite took to insert them.
 */
export async function insertItems(ctx: Pick<Ctx, 'db'>, rows: MailboxMigrationItemsTable[]): Promise<void> {
  for (let i = 0; i < rows.length; i += ITEMS_PER_INSERT) {
    const count = Math.min(ITEMS_PER_INSERT, rows.length - i);
    const params: unknown[] = [];
    for (let r = i; r < i + count; r++) for (const column of SCANNED_ITEM_COLUMNS) params.push(rows[r][column] ?? null);
    await runText(
      ctx.db,
      `scanned-items|${count}`,
      () =>
        `insert into mailbox_migration_items (${SCANNED_ITEM_COLUMNS.join(', ')}) values ${Array.from({ length: count }, () => `(${placeholders(SCANNED_ITEM_COLUMNS.length)})`).join(', ')} on conflict (migration_id, source_key) do nothing`,
      params,
    );
  }
}

/** Marks a promise as handled now (it is awaited later): a rejection meanwhile must not end the process. */
function settledLater<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

/** The item of one fetched header block of a folder. */
export function itemOfHeaders(
  migrationId: string,
  folder: string,
  uidValidity: string,
  h: HeaderFetch,
  parse: HeaderParser,
): Promise<MailboxMigrationItemsTable> {
  return itemFromHeaders(
    {
      migrationId,
      sourceKey: sourceKey(folder, uidValidity, h.uid),
      folder,
      uid: h.uid,
      headers: h.headers,
      size: h.size,
      internalDate: h.internalDate,
      flags: h.flags,
      gmailLabels: h.labels,
    },
    parse,
  );
}

/** A chunk's items and the folder's resume point past it, in one transaction. */
async function storeScannedChunk(ctx: Ctx, migrationId: string, folder: string, items: MailboxMigrationItemsTable[], to: number, done: boolean): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    await insertItems({ db: trx }, items);
    await trx
      .updateTable('mailbox_migration_folders')
      .set({ scanned_uid: to, scan_done: done ? 1 : 0 })
      .where('migration_id', '=', migrationId)
      .where('path', '=', folder)
      .execute();
  });
}

/**
 * One step of the scan: reads headers until the time budget is used. Returns 'more' while folders
 * are left, 'done' once every folder is read (the caller then plans).
 */
export async function scanStep(
  ctx: Ctx,
  m: MigrationRow,
  mailbox: MailSource,
  budgetMs: number,
  parse: HeaderParser = parseHeaderBlock,
): Promise<'more' | 'done'> {
  const started = performance.now();
  const { chosen } = chooseFolders(m, await mailbox.folders());
  const rows = await ctx.db.selectFrom('mailbox_migration_folders').selectAll().where('migration_id', '=', m.id).execute();
  const known = new Map(rows.map((r) => [r.path, r]));
  for (const folder of chosen) {
    if (folder.neverRead) continue;
    let row = known.get(folder.path);
    if (row?.scan_done) continue;
    const box = await mailbox.examine(folder.path);
    if (!row || row.uid_validity !== box.uidValidity || row.uid_next === null) {
      // New folder, first look in this scan, or the server rebuilt the folder (new UIDVALIDITY).
      if (row && row.uid_validity !== null && row.uid_validity !== box.uidValidity) {
        await ctx.db
          .deleteFrom('mailbox_migration_items')
          .where('migration_id', '=', m.id)
          .where('folder', '=', folder.path)
          .where('status', '!=', 'copied')
          .execute();
      }
      const scannedUid = row && row.uid_validity === box.uidValidity ? row.scanned_uid : 0;
      if (scannedUid > 0) {
        // A second scan of the same folder: messages deleted since are no longer part of the plan.
        const present = new Set(await mailbox.uids());
        const stale = await ctx.db
          .selectFrom('mailbox_migration_items')
          .select(['source_key', 'uid'])
          .where('migration_id', '=', m.id)
          .where('folder', '=', folder.path)
          .where('status', '!=', 'copied')
          .execute();
        const gone = stale.filter((s) => s.uid !== null && !present.has(Number(s.uid))).map((s) => s.source_key);
        for (let i = 0; i < gone.length; i += 500) {
          await ctx.db
            .deleteFrom('mailbox_migration_items')
            .where('migration_id', '=', m.id)
            .where('source_key', 'in', gone.slice(i, i + 500))
            .execute();
        }
      }
      const values = {
        delimiter: folder.delimiter,
        special_use: folder.specialUse,
        uid_validity: box.uidValidity,
        scanned_uid: scannedUid,
        messages: box.exists,
        uid_next: box.uidNext,
        scan_done: 0,
      };
      await ctx.db
        .insertInto('mailbox_migration_folders')
        .values({ migration_id: m.id, path: folder.path, ...values })
        .onConflict((oc) => oc.columns(['migration_id', 'path']).doUpdateSet(values))
        .execute();
      row = { migration_id: m.id, path: folder.path, ...values };
    }
    const last = Math.max(0, Number(row.uid_next ?? 1) - 1);
    let from = Number(row.scanned_uid) + 1;
    // Pipelined: each header block goes to the parser as it arrives, and a chunk's rows are written
    // while the next chunk is fetched (one write at a time, in UID order, so the resume point only
    // moves past rows that are stored).
    let writing: Promise<void> | undefined;
    try {
      while (from <= last) {
        const to = Math.min(last, from + SCAN_CHUNK - 1);
        const parsing: Promise<MailboxMigrationItemsTable>[] = [];
        for await (const h of mailbox.headers(`${from}:${to}`, SCAN_HEADER_FIELDS)) {
          if (h.uid >= from && h.uid <= to) parsing.push(settledLater(itemOfHeaders(m.id, folder.path, box.uidValidity, h, parse)));
        }
        const items = await Promise.all(parsing);
        await writing;
        writing = settledLater(storeScannedChunk(ctx, m.id, folder.path, items, to, to >= last));
        from = to + 1;
        if (performance.now() - started > budgetMs && from <= last) {
          await writing;
          return 'more';
        }
      }
    } finally {
      // A failed fetch still lets the chunk before it finish (its resume point is kept).
      await writing?.catch(() => undefined);
    }
    await writing;
    if (last === 0 || from > last) {
      await ctx.db.updateTable('mailbox_migration_folders').set({ scan_done: 1 }).where('migration_id', '=', m.id).where('path', '=', folder.path).execute();
    }
    if (performance.now() - started > budgetMs) return 'more';
  }
  return 'done';
}

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
