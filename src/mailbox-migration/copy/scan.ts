// The dry run: headers only are read (BODY.PEEK[HEADER.FIELDS …], flags, dates, sizes), folder by
// folder in UID order, with the resume point stored after every chunk, so a restart continues where
// it stopped. When every chosen folder is read, the copy is planned (finish-scan.ts, plan.ts) and the migration is
// ready (or paused again, when the plan was changed during a pause).
import type { Ctx } from '../../context.js';
import { placeholders, runText } from '../../db/bulk.js';
import type { MailboxMigrationItemsTable } from '../../db/schema.js';
import { AUTOMATIC_HEADER_FIELDS, DIRECT_HEADER_BLOCK_BYTES, parseHeaderBlock } from '../../mail/parse.js';
import type { HeaderFetch, ImapFolder } from '../sources/imap.js';
import type { MailSource } from '../sources/mail-source.js';
import { findPreset } from '../sources/presets.js';
import type { MigrationRow } from '../store.js';
import { NEVER_READ_SPECIAL_USE } from './plan.js';
import { type HeaderParser, itemFromHeaders, type ScanBatch, sourceKey } from './scanned-item.js';

export { type HeaderParser, itemFromHeaders, sourceKey } from './scanned-item.js';

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

/** The folder a batch of scanned header blocks belongs to. */
export interface ScanScope {
  migrationId: string;
  folder: string;
  uidValidity: string;
}

/**
 * Reads a batch of one folder's fetched header blocks into their items, in order. The migration
 * worker hands them to its parse worker (`MigrationWorker.parseScanned`); the default reads them here.
 */
export type ScanParser = (scope: ScanScope, blocks: HeaderFetch[]) => Promise<MailboxMigrationItemsTable[]>;

/** A ScanParser that reads each block on this thread with `parse`. */
export function scanParserOf(parse: HeaderParser): ScanParser {
  return (scope, blocks) => Promise.all(blocks.map((h) => itemOfHeaders(scope.migrationId, scope.folder, scope.uidValidity, h, parse)));
}

/** The batch a parse worker reads (scannedItems): blocks of at most DIRECT_HEADER_BLOCK_BYTES, copied into one buffer. */
export function scanBatchOf(scope: ScanScope, blocks: HeaderFetch[]): ScanBatch {
  let total = 0;
  for (const h of blocks) {
    if (h.headers.length > DIRECT_HEADER_BLOCK_BYTES) throw new Error('a header block this large is read on its own');
    total += h.headers.length;
  }
  const buffer = new Uint8Array(total);
  const ends: number[] = [];
  let at = 0;
  for (const h of blocks) {
    buffer.set(h.headers, at);
    at += h.headers.length;
    ends.push(at);
  }
  return {
    ...scope,
    messages: blocks.map((h) => ({
      uid: h.uid,
      size: h.size,
      internalDate: h.internalDate ? h.internalDate.getTime() : null,
      flags: h.flags,
      ...(h.labels ? { labels: h.labels } : {}),
    })),
    blocks: buffer,
    ends,
  };
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

/** A UID range whose FETCH was started ahead: its first answer is on the way. */
interface RangeFetch {
  from: number;
  to: number;
  iterator: AsyncIterator<HeaderFetch>;
  first: Promise<IteratorResult<HeaderFetch>>;
  close(): void;
}

function fetchRange(mailbox: MailSource, from: number, to: number): RangeFetch {
  const iterator = mailbox.headers(`${from}:${to}`, SCAN_HEADER_FIELDS);
  return {
    from,
    to,
    iterator,
    first: settledLater(iterator.next()),
    // Left unread (a failure before its turn): its answers are drained by the client, never parsed.
    close: () => void iterator.return?.(undefined)?.catch(() => undefined),
  };
}

/** Header blocks handed to the parser at most this many at a time (or SCAN_BATCH_BYTES). */
export const SCAN_BATCH = 200;
const SCAN_BATCH_BYTES = 512 * 1024;

/**
 * Reads one range's FETCH to its end, handing the blocks to the parser as they come: at once while
 * the parser has nothing to do, else gathered into batches (one hand-off per batch). Returns the
 * batches' items, in UID order.
 */
async function readRange(range: RangeFetch, scope: ScanScope, parse: ScanParser): Promise<Promise<MailboxMigrationItemsTable[]>[]> {
  const parsing: Promise<MailboxMigrationItemsTable[]>[] = [];
  let batch: HeaderFetch[] = [];
  let bytes = 0;
  let busy = 0;
  const send = () => {
    const blocks = batch;
    batch = [];
    bytes = 0;
    busy++;
    parsing.push(settledLater(parse(scope, blocks).finally(() => busy--)));
  };
  let result = await range.first;
  while (!result.done) {
    const h = result.value;
    if (h.uid >= range.from && h.uid <= range.to) {
      batch.push(h);
      bytes += h.headers.length;
      if (busy === 0 || batch.length >= SCAN_BATCH || bytes >= SCAN_BATCH_BYTES) send();
    }
    result = await range.iterator.next();
  }
  if (batch.length) send();
  return parsing;
}

/**
 * One step of the scan: reads headers until the time budget is used. Returns 'more' while folders
 * are left, 'done' once every folder is read (the caller then plans). `chunk`: UIDs per FETCH (tests).
 */
export async function scanStep(
  ctx: Ctx,
  m: MigrationRow,
  mailbox: MailSource,
  budgetMs: number,
  parse: ScanParser = scanParserOf(parseHeaderBlock),
  chunk = SCAN_CHUNK,
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
    const scope: ScanScope = { migrationId: m.id, folder: folder.path, uidValidity: box.uidValidity };
    // Pipelined: the next range's FETCH is asked for as soon as a range's is (the client sends it the
    // moment the first ends, so the server is never left waiting for us); header blocks go to the
    // parser in batches as they arrive; and a range's rows are written, once parsed, while the next
    // range is read (one write at a time, in UID order, so the resume point only moves past rows
    // that are stored).
    let writing: Promise<void> | undefined;
    let next: RangeFetch | undefined = from <= last ? fetchRange(mailbox, from, Math.min(last, from + chunk - 1)) : undefined;
    try {
      while (next) {
        const range = next;
        const to = range.to;
        next = undefined;
        if (to < last && performance.now() - started <= budgetMs) next = fetchRange(mailbox, to + 1, Math.min(last, to + chunk));
        const parsing = await readRange(range, scope, parse);
        const before = writing;
        writing = settledLater(
          (async () => {
            const items = (await Promise.all(parsing)).flat();
            await before;
            await storeScannedChunk(ctx, m.id, folder.path, items, to, to >= last);
          })(),
        );
        // One write waits at a time: the rows of at most two ranges are held.
        await before;
        from = to + 1;
        if (!next && from <= last) {
          await writing;
          return 'more';
        }
      }
    } finally {
      next?.close();
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
