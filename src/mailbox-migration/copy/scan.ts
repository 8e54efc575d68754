// The dry run: headers only are read (BODY.PEEK[HEADER.FIELDS …], flags, dates, sizes), folder by
// folder in UID order, with the resume point stored after every chunk, so a restart continues where
// it stopped. When every chosen folder is read, the copy is planned (finish-scan.ts, plan.ts) and the migration is
// ready (or paused again, when the plan was changed during a pause).
import { normalizeAddress } from '../../contacts/service.js';
import type { Ctx } from '../../context.js';
import { placeholders, runText } from '../../db/bulk.js';
import type { MailboxMigrationItemsTable } from '../../db/schema.js';
import { AUTOMATIC_HEADER_FIELDS, type InboundMail, parseHeaderBlock } from '../../mail/parse.js';
import { iso } from '../../platform/clock.js';
import type { HeaderFetch, ImapFolder } from '../sources/imap.js';
import type { MailSource } from '../sources/mail-source.js';
import { findPreset } from '../sources/presets.js';
import type { MigrationRow } from '../store.js';
import { NEVER_READ_SPECIAL_USE } from './plan.js';

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
