// The copy: threads newest first, in batches bounded by count and bytes (so memory stays flat
// however large the mailbox). Per batch: fetch the messages (BODY.PEEK[]), parse them off the main
// thread, write kept attachments (and originals when asked) to storage, then one transaction writes
// contacts, conversations, messages and the items' new status together, so that a crash repeats
// nothing (an item is either copied with its message, or still planned). Imported mail is quiet: no
// webhooks, notifications or outbound mail; only migration.progress reaches owners and admins.
import type { Ctx } from '../../context.js';
import { attachmentKey, rawEmailKey } from '../../conversations/files.js';
import type { Db } from '../../db/schema.js';
import { announceEvents } from '../../events/service.js';
import type { InboundMail } from '../../mail/parse.js';
import { newId } from '../../platform/ids.js';
import { type HelpDeskEntryMeta, helpDeskEntryMeta, isHelpDesk } from '../sources/helpdesk/store.js';
import type { MailSource } from '../sources/mail-source.js';
import { loadProgress, lockMigration, type MigrationRow, type Progress, progressAfter, recordMigrationProgress } from '../store.js';
import { legacyIdOf } from './existing.js';
import type { Fetched, ItemRow } from './fetched.js';
import { labelOfFolder } from './plan.js';
import { teamAddressesOf } from './team.js';
import { writeBatch } from './write.js';

/** Per batch: at most this many threads, messages and bytes of source. */
export const BATCH_THREADS = 100;
export const BATCH_MESSAGES = 200;
export const BATCH_BYTES = 8 * 1024 * 1024;
/**
 * Source bytes read but not yet parsed and stored: the read waits beyond this, so a fast source (an
 * export file on disk) cannot queue a whole batch of raw messages for the parser at once.
 */
export const PREPARING_BYTES = 2 * 1024 * 1024;

/** Attachment types this server does not keep from imported mail (they stay in the original). */
const UNKEPT_TYPES = new Set([
  'application/x-msdownload',
  'application/x-msdos-program',
  'application/x-dosexec',
  'application/x-executable',
  'application/vnd.microsoft.portable-executable',
  'application/x-ms-installer',
  'application/x-msi',
  'application/x-sh',
  'application/x-bat',
  'application/x-ms-shortcut',
  'application/hta',
  'application/x-javascript',
  'application/ms-tnef',
]);
const UNKEPT_EXTENSIONS = /\.(exe|com|bat|cmd|scr|pif|msi|msp|vbs|vbe|js|jse|wsf|wsh|ps1|jar|cpl|hta|lnk|reg|scf|dll)$/i;

export function keepsAttachment(a: { filename: string; contentType: string; size: number }, maxBytes: number): boolean {
  if (a.size > maxBytes) return false;
  if (UNKEPT_TYPES.has(a.contentType.toLowerCase())) return false;
  if (UNKEPT_EXTENSIONS.test(a.filename)) return false;
  if (a.filename.toLowerCase() === 'winmail.dat') return false;
  return true;
}

export interface CopyDeps {
  parse(raw: Buffer): Promise<InboundMail>;
  limits?: { batchThreads: number; batchMessages: number; batchBytes: number };
}

function uidValidityOf(sourceKey: string): string | null {
  const m = /^imap:([^:]*):(\d+):/.exec(sourceKey);
  return m ? m[1] : null;
}

/**
 * Reads the batch's messages from the mailbox, handing each to `take` as it arrives (so parsing
 * overlaps the fetch); items missing there are marked gone.
 */
async function fetchBatch(
  mailbox: MailSource,
  items: ItemRow[],
  take: (item: ItemRow, source: Buffer) => Promise<void>,
  folders: { last?: string },
): Promise<{ failed: Map<string, string>; gone: string[] }> {
  const failed = new Map<string, string>();
  const gone: string[] = [];
  const byFolder = new Map<string, ItemRow[]>();
  // The folder the last batch ended in first: it is still open, so the batch starts without an EXAMINE.
  if (folders.last !== undefined && items.some((i) => i.folder === folders.last)) byFolder.set(folders.last, []);
  for (const item of items) {
    let list = byFolder.get(item.folder);
    if (!list) byFolder.set(item.folder, (list = []));
    list.push(item);
  }
  for (const [folder, list] of byFolder) {
    folders.last = folder;
    const box = await mailbox.examine(folder);
    const current = list.filter((i) => uidValidityOf(i.source_key) === box.uidValidity);
    for (const i of list)
      if (!current.includes(i)) failed.set(i.source_key, 'the folder was rebuilt at the provider (its UIDVALIDITY changed); scan again to copy this message');
    const byUid = new Map(current.map((i) => [Number(i.uid), i]));
    const received = new Set<string>();
    for await (const { uid, source } of mailbox.sources([...byUid.keys()].sort((a, b) => a - b))) {
      const item = byUid.get(uid);
      if (!item || received.has(item.source_key)) continue;
      received.add(item.source_key);
      await take(item, source);
    }
    for (const i of current) if (!received.has(i.source_key)) gone.push(i.source_key);
  }
  return { failed, gone };
}

/** Stores what is kept of one message (attachments, and the original when asked) before the transaction. */
async function storeFiles(ctx: Ctx, m: MigrationRow, f: Fetched, raw: Buffer): Promise<void> {
  const maxBytes = ctx.config.attachmentMaxBytes;
  const kept = f.mail.attachments.filter((a) => keepsAttachment({ filename: a.filename, contentType: a.contentType, size: a.content.length }, maxBytes));
  f.omitted = f.mail.attachmentsOmitted + (f.mail.attachments.length - kept.length);
  for (const a of kept) {
    const id = newId('att');
    const key = attachmentKey(m.workspace_id, id);
    const stored = await ctx.storage.put(key, a.content, { contentType: a.contentType });
    f.written.push(key);
    f.files.push({
      id,
      filename: a.filename,
      contentType: a.contentType,
      size: stored.size,
      sha256: stored.sha256,
      storageKey: key,
      contentId: a.contentId,
      inline: a.inline,
    });
  }
  if (m.keep_originals) {
    const key = rawEmailKey(m.workspace_id, newId('eml'));
    const stored = await ctx.storage.put(key, raw, { contentType: 'message/rfc822' });
    f.written.push(key);
    f.rawStored = { storageKey: key, size: stored.size, sha256: stored.sha256 };
  }
}

/** The label each of the migration's folders gives its conversations (the user's mapping, else the default). */
export async function folderLabelsOf(ctx: Pick<Ctx, 'db'>, m: Pick<MigrationRow, 'id' | 'folder_labels'>): Promise<Map<string, string | null>> {
  const folderRows = await ctx.db
    .selectFrom('mailbox_migration_folders')
    .select(['path', 'special_use', 'delimiter'])
    .where('migration_id', '=', m.id)
    .execute();
  const mapping = JSON.parse(m.folder_labels) as Record<string, string | null>;
  return new Map(folderRows.map((f) => [f.path, labelOfFolder(f.path, f.special_use, f.delimiter, mapping)]));
}

/** Items that are part of a thread's conversation (skipped and failed ones are not). */
export const THREAD_MEMBER_STATUSES: ReadonlySet<string> = new Set(['planned', 'duplicate', 'copied']);

/**
 * The items of some threads, oldest first. The status is filtered by the caller: a condition on it
 * here made SQLite choose the (migration, status) index, which holds nearly every item of the
 * migration, over (migration, thread_key) — a read of the whole migration per batch (0.8 s of
 * 100,000 items instead of 0.06 s on a loaded machine).
 */
export function threadItemsQuery(db: Db, migrationId: string, threadKeys: string[]) {
  return db.selectFrom('mailbox_migration_items').where('migration_id', '=', migrationId).where('thread_key', 'in', threadKeys).orderBy('sent_at');
}

export type CopyOutcome = 'more' | 'done' | 'stopped';

type BatchLimits = NonNullable<CopyDeps['limits']>;

/** A batch read from the mailbox: its messages parsed and their files stored, not yet written. */
interface ReadBatch {
  threads: ThreadRow[];
  items: ItemRow[];
  helpDesk?: Map<number, HelpDeskEntryMeta>;
  fetched: Fetched[];
  failed: Map<string, string>;
  gone: string[];
}

type ThreadRow = Awaited<ReturnType<typeof plannedThreads>>[number];

function plannedThreads(ctx: Pick<Ctx, 'db'>, migrationId: string, limit: number) {
  return ctx.db
    .selectFrom('mailbox_migration_threads')
    .selectAll()
    .where('migration_id', '=', migrationId)
    .where('status', '=', 'planned')
    .orderBy('newest_at', 'desc')
    .orderBy('thread_key')
    .limit(limit)
    .execute();
}

/** Deletes the files a batch stored before its transaction (it was not written, or failed). */
async function discardFiles(ctx: Pick<Ctx, 'storage'>, fetched: readonly Fetched[]): Promise<void> {
  await Promise.allSettled(fetched.flatMap((f) => f.written.map((k) => ctx.storage.delete(k))));
}

type ChosenBatch = Pick<ReadBatch, 'threads' | 'items' | 'helpDesk'> & { toCopy: ItemRow[] };

/**
 * The next batch: planned threads newest first, leaving out `reading` (the threads of a batch read
 * but not yet written); null when no planned thread is left.
 */
async function chooseBatch(ctx: Ctx, m: MigrationRow, limits: BatchLimits, reading: ReadonlySet<string>): Promise<ChosenBatch | null> {
  const threads = (await plannedThreads(ctx, m.id, limits.batchThreads + reading.size)).filter((t) => !reading.has(t.thread_key)).slice(0, limits.batchThreads);
  if (threads.length === 0) return null;
  const keys = threads.map((t) => t.thread_key);
  const allItems = (await threadItemsQuery(ctx.db, m.id, keys).selectAll().execute()).filter((i) => THREAD_MEMBER_STATUSES.has(i.status));
  // Whole threads, newest first, while the batch stays under its bounds (at least one thread).
  const batch: ThreadRow[] = [];
  let messages = 0;
  let bytes = 0;
  for (const t of threads) {
    const own = allItems.filter((i) => i.thread_key === t.thread_key && i.status === 'planned');
    const size = own.reduce((s, i) => s + Number(i.size), 0);
    if (batch.length > 0 && (messages + own.length > limits.batchMessages || bytes + size > limits.batchBytes)) break;
    batch.push(t);
    messages += own.length;
    bytes += size;
  }
  const batchKeys = new Set(batch.map((t) => t.thread_key));
  const toCopy = allItems.filter((i) => batchKeys.has(i.thread_key!) && i.status === 'planned');
  // A help desk's entries say more than their mail form: private notes and the ticket's tags.
  const helpDesk = isHelpDesk(m)
    ? await helpDeskEntryMeta(
        ctx.db,
        m.id,
        toCopy.map((i) => Number(i.uid)),
      )
    : undefined;
  return { threads: batch, items: allItems, helpDesk, toCopy };
}

/** Reads a chosen batch from the mailbox: its messages parsed and their files stored. */
async function readBatch(ctx: Ctx, m: MigrationRow, mailbox: MailSource, deps: CopyDeps, chosen: ChosenBatch, folders: { last?: string }): Promise<ReadBatch> {
  const { toCopy, ...batch } = chosen;
  // Each message is parsed (off the main thread) and its files stored as soon as it arrives.
  // Only what the transaction needs is kept of a message once its files are stored (not its raw
  // source, not its attachments' contents), and the read waits while PREPARING_BYTES are in hand.
  const preparing: Promise<Fetched>[] = [];
  const inHand = new Set<Promise<unknown>>();
  let inHandBytes = 0;
  const prepare = async (item: ItemRow, raw: Buffer): Promise<Fetched> => {
    const mail = await deps.parse(raw);
    const f: Fetched = { item, mail, legacyId: mail.messageId ? null : legacyIdOf(raw), files: [], omitted: 0, written: [] };
    try {
      await storeFiles(ctx, m, f, raw);
    } catch (error) {
      await discardFiles(ctx, [f]);
      throw error;
    }
    f.mail = { ...mail, attachments: [] };
    return f;
  };
  const fetchResult = await fetchBatch(
    mailbox,
    toCopy,
    async (item, raw) => {
      while (inHandBytes > 0 && inHandBytes + raw.length > PREPARING_BYTES) await Promise.race(inHand);
      const p = prepare(item, raw);
      p.catch(() => undefined);
      preparing.push(p);
      const done = p.then(
        () => undefined,
        () => undefined,
      );
      inHand.add(done);
      inHandBytes += raw.length;
      void done.then(() => {
        inHand.delete(done);
        inHandBytes -= raw.length;
      });
    },
    folders,
  ).then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  // Every prepared message has finished before anything is decided (no files left unreferenced).
  const settled = await Promise.allSettled(preparing);
  const fetched = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const rejected = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if ('error' in fetchResult || rejected) {
    await discardFiles(ctx, fetched);
    throw 'error' in fetchResult ? fetchResult.error : rejected?.reason;
  }
  return { ...batch, fetched, ...fetchResult.value };
}

/**
 * Copies batches until the time budget is used or nothing is left. 'done': every planned thread is
 * copied; 'stopped': the migration left the copying state (pause, cancel) meanwhile. The next batch
 * is read from the mailbox (fetched, parsed, its files stored) while one is written, so the old
 * mailbox's server, the parse worker and the database work at the same time; the writes stay one
 * transaction per batch, in order, and a batch read ahead that is not written has its files deleted.
 */
export async function copyStep(ctx: Ctx, m: MigrationRow, mailbox: MailSource, deps: CopyDeps, budgetMs: number): Promise<CopyOutcome> {
  const started = performance.now();
  const limits = deps.limits ?? { batchThreads: BATCH_THREADS, batchMessages: BATCH_MESSAGES, batchBytes: BATCH_BYTES };
  const team = await teamAddressesOf(ctx, m);
  const labelOf = await folderLabelsOf(ctx, m);
  const mapping = JSON.parse(m.folder_labels) as Record<string, string | null>;
  const folders: { last?: string } = {};
  const first = await chooseBatch(ctx, m, limits, new Set());
  if (!first) return 'done';
  let next = readBatch(ctx, m, mailbox, deps, first, folders);
  // The progress each batch records: counted by the step's first batch, then carried forward by
  // what each batch changed (counting every item of the migration per batch grew with its size).
  // An action meanwhile (retry moves failed items back to planned) changes the migration's
  // updated_at, and the next batch counts again.
  let progress: { counted: Progress; migrationUpdatedAt: string } | undefined;
  for (;;) {
    const current = await next;
    // The next batch is chosen before this one's transaction begins (on SQLite its queries would
    // wait for the whole transaction), so its FETCH is on its way while this one is written.
    const withinBudget = performance.now() - started <= budgetMs;
    let chosen: ChosenBatch | null = null;
    try {
      if (withinBudget) chosen = await chooseBatch(ctx, m, limits, new Set(current.threads.map((t) => t.thread_key)));
    } catch (error) {
      await discardFiles(ctx, current.fetched);
      throw error;
    }
    const ahead = chosen ? readBatch(ctx, m, mailbox, deps, chosen, folders) : undefined;
    ahead?.catch(() => undefined);
    const discardAhead = async () => {
      const read = await ahead?.catch(() => null);
      if (read) await discardFiles(ctx, read.fetched);
    };
    // Messages stored by the batch, or null when the migration left the copying state meanwhile.
    let copied: number | null = null;
    try {
      copied = await ctx.db.transaction().execute(async (trx) => {
        const locked = await lockMigration(trx, m.id);
        if (!locked || (locked.state !== 'copying' && locked.state !== 'syncing')) return null;
        const written = await writeBatch(ctx, trx, locked, { ...current, team, labelOf, mapping });
        const counted =
          progress && progress.migrationUpdatedAt === locked.updated_at ? progressAfter(progress.counted, written.change) : await loadProgress(trx, locked.id);
        await recordMigrationProgress({ db: trx, clock: ctx.clock }, locked, counted);
        progress = { counted, migrationUpdatedAt: locked.updated_at };
        return written.copied;
      });
    } catch (error) {
      await discardFiles(ctx, current.fetched);
      await discardAhead();
      throw error;
    }
    if (copied === null) {
      await discardFiles(ctx, current.fetched);
      await discardAhead();
      return 'stopped';
    }
    ctx.metrics.migrationMessagesCopied.inc(copied);
    announceEvents(ctx);
    if (ahead) {
      next = ahead;
      continue;
    }
    if (!withinBudget) return 'more';
    // Nothing was left when this batch was chosen, but a retry meanwhile may have planned again a
    // thread of the batch itself (left planned by markThreadsCopied): looked for once more.
    const again = await chooseBatch(ctx, m, limits, new Set());
    if (!again) return 'done';
    next = readBatch(ctx, m, mailbox, deps, again, folders);
  }
}
