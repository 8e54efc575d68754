// The copy: threads newest first, in batches bounded by count and bytes (so memory stays flat
// however large the mailbox). Per batch: fetch the messages (BODY.PEEK[]), parse them off the main
// thread, write kept attachments (and originals when asked) to storage, then one transaction writes
// contacts, conversations, messages and the items' new status together, so that a crash repeats
// nothing (an item is either copied with its message, or still planned). Imported mail is quiet: no
// webhooks, notifications or outbound mail; only migration.progress reaches owners and admins.
import { createHash } from 'node:crypto';
import { type Insertable, sql, type Transaction } from 'kysely';
import { contactsByEmail, createAnonymousContact, findOrCreateContactByEmail } from '../../contacts/identify.js';
import { normalizeAddress } from '../../contacts/service.js';
import type { ContactView } from '../../contacts/store.js';
import type { Ctx } from '../../context.js';
import { attachmentKey, rawEmailKey } from '../../conversations/files.js';
import type { AttachmentRow, ConversationRow, MessageRow } from '../../conversations/format.js';
import {
  addConversationLabels,
  conversationById,
  firstConversationOf,
  importDividerRow,
  newestMessage,
  replaceImportDivider,
  setConversationStatus,
} from '../../conversations/imported.js';
import {
  type Author,
  checkLabels,
  insertConversationRows,
  insertMessage,
  insertMessageRows,
  MAX_LABELS,
  type NewConversation,
  type NewMessage,
  newConversationRow,
  newMessageRows,
  type StoredAttachment,
} from '../../conversations/service.js';
import type { Database, Db, MailboxMigrationItemsTable } from '../../db/schema.js';
import { announceEvents } from '../../events/service.js';
import { findStoredCopies, type MailIdentity, mailIdentity, registerStoredMail, registerStoredMails, type StoredCopy } from '../../mail/duplicates.js';
import { conversationsByMailId, storedCopyByMailId } from '../../mail/imported.js';
import { type InboundMail, mailHeadersOf } from '../../mail/parse.js';
import { sanitizeMailHtml } from '../../mail/sanitize.js';
import { iso } from '../../platform/clock.js';
import { newId } from '../../platform/ids.js';
import { type HelpDeskEntryMeta, helpDeskCustomerAttribute, helpDeskEntryMeta, isHelpDesk, tagLabels } from '../sources/helpdesk/store.js';
import type { MailSource } from '../sources/mail-source.js';
import { loadProgress, lockMigration, type MigrationRow, type Progress, type ProgressChange, progressAfter, recordMigrationProgress } from '../store.js';
import { importedStatus, labelOfFolder, labelsOfItem } from './plan.js';
import { type TeamAddresses, teamAddressesOf } from './team.js';

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

export const DIVIDER_TYPE = 'imported_divider';

export interface CopyDeps {
  parse(raw: Buffer): Promise<InboundMail>;
  limits?: { batchThreads: number; batchMessages: number; batchBytes: number };
}

type ItemRow = MailboxMigrationItemsTable;

interface Fetched {
  item: ItemRow;
  /** The parsed message; attachment contents are dropped once stored. */
  mail: InboundMail;
  /** The id a message without Message-ID was registered under before mail digests (from its raw source, which is not kept). */
  legacyId: string | null;
  files: StoredAttachment[];
  omitted: number;
  rawStored?: { storageKey: string; size: number; sha256: string };
  written: string[];
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

interface BatchInput {
  threads: { thread_key: string; conversation_id: string | null; customer_address: string | null; customer_name: string | null; subject: string | null }[];
  items: ItemRow[];
  fetched: Fetched[];
  failed: Map<string, string>;
  gone: string[];
  team: TeamAddresses;
  labelOf: Map<string, string | null>;
  /** Help-desk entries by UID: notes and tags. */
  helpDesk?: Map<number, HelpDeskEntryMeta>;
  /** folder_labels: Gmail labels are mapped by it too. */
  mapping: Record<string, string | null>;
}

/** Writes one batch; returns how many messages it stored, and how it changed the migration's progress. */
async function writeBatch(ctx: Ctx, trx: Transaction<Database>, m: MigrationRow, input: BatchInput): Promise<{ copied: number; change: ProgressChange }> {
  let copied = 0;
  const tx = { db: trx, clock: ctx.clock };
  const now = ctx.clock.now();
  const inboxId = m.inbox_id!;
  const contacts = new Map<string, ContactView>();
  /** Contacts this batch created, recorded as the migration's at its end. */
  const createdContacts: string[] = [];
  // Conversations the batch creates are written with their messages at its end (or earlier, when
  // something must read them first), a few multi-row inserts instead of several statements a message.
  const pending = new PendingWrites(tx);
  // A help desk's customers keep the provider's id as an attribute (external ids are the customer backend's).
  const providerIds = new Map<string, string>();
  const addressKey = (address: string) => {
    try {
      return normalizeAddress(address);
    } catch {
      return null; // an address the provider holds but mail cannot carry: no contact is found by it
    }
  };
  for (const meta of input.helpDesk?.values() ?? [])
    for (const c of meta.customerIds) {
      const key = addressKey(c.email);
      if (key) providerIds.set(key, c.externalId);
    }
  const byKey = new Map(input.fetched.map((f) => [f.item.source_key, f]));
  const batchThreadKeys = new Set(input.threads.map((t) => t.thread_key));
  const toStore = input.items.filter((i) => i.status === 'planned' && byKey.has(i.source_key) && batchThreadKeys.has(i.thread_key!));
  // What the batch looks up message by message is read for the whole batch first, one statement
  // per kind: the contacts of its addresses, the stored copies of its mails, the conversations
  // holding the Message-IDs its threads name. What the batch itself stores is added as it goes
  // (storedInBatch, mailIdsInBatch; a created contact is cached), so every answer stays what a
  // lookup at that moment would give.
  const addresses = [...input.threads.map((t) => t.customer_address), ...toStore.map((i) => i.from_address)];
  const knownContacts = await contactsByEmail(
    trx,
    m.workspace_id,
    addresses.flatMap((a) => {
      const key = a ? addressKey(a) : null;
      return key ? [key] : [];
    }),
  );
  const contactFor = async (address: string | null, name: string | null): Promise<ContactView> => {
    if (!address) return createAnonymousContact(tx, { workspaceId: m.workspace_id, name: name ?? 'Unknown sender' });
    const key = addressKey(address);
    const cached = contacts.get(key ?? address);
    if (cached) return cached;
    const providerId = providerIds.get(key ?? '');
    const attributes = providerId ? { [helpDeskCustomerAttribute(m)]: providerId } : undefined;
    const found = key ? (knownContacts.get(key) ?? null) : undefined;
    const { view, created } = await findOrCreateContactByEmail(tx, { workspaceId: m.workspace_id, email: address, name, attributes, quiet: true, found });
    if (created) createdContacts.push(view.contact.id);
    contacts.set(key ?? address, view);
    return view;
  };
  const identityOf = (item: ItemRow) => {
    const mail = byKey.get(item.source_key)!.mail;
    return mailIdentity(mail, mail.messageId ?? item.rfc_id);
  };
  const storedBefore = await findStoredCopies(
    trx,
    { workspaceId: m.workspace_id, inboxId },
    toStore.map((i) => identityOf(i)),
  );
  const storedInBatch = new Map<string, StoredCopy>();
  const threadIds = (members: ItemRow[]) => [...new Set(threadMailIds(members, byKey))].slice(0, 500);
  const lookedUp = new Set(input.threads.flatMap((t) => threadIds(input.items.filter((i) => i.thread_key === t.thread_key))));
  const mailIdsBefore = await conversationsByMailId(trx, m.workspace_id, inboxId, [...lookedUp]);
  /** Message-IDs the batch registered (an id held before keeps its conversation; of the batch's, the first takes it). */
  const mailIdsInBatch = new Map<string, string>();
  const stored = (identity: MailIdentity, copy: StoredCopy) => {
    storedInBatch.set(identity.digest, copy);
    const id = identity.messageId;
    if (id && lookedUp.has(id) && !mailIdsBefore.has(id) && !mailIdsInBatch.has(id)) mailIdsInBatch.set(id, copy.conversation_id);
  };
  const setItem = (sourceKey: string, values: Partial<ItemRow>) =>
    trx.updateTable('mailbox_migration_items').set(values).where('migration_id', '=', m.id).where('source_key', '=', sourceKey).execute();

  // Copied and duplicate items, and the batch's threads, are written together at the end (a few
  // statements per batch instead of one per message and thread).
  const settled: SettledItem[] = [];
  const threadsDone: { threadKey: string; conversationId: string | null }[] = [];

  for (const [key, error] of input.failed) await setItem(key, { status: 'failed', error, attempts: 1 });
  for (const key of input.gone) await setItem(key, { status: 'skipped', skip_reason: 'gone' });

  for (const thread of input.threads) {
    const members = input.items.filter((i) => i.thread_key === thread.thread_key);
    const own = members.filter((i) => i.status === 'planned' && byKey.has(i.source_key));
    const tags = input.helpDesk ? own.flatMap((i) => tagLabels(input.helpDesk!.get(Number(i.uid))?.tags ?? [])) : [];
    const labels = checkLabels(
      [...new Set([...members.flatMap((i) => labelsOfItem(i, input.labelOf, input.mapping)), ...tags].filter((l): l is string => !!l))].slice(0, MAX_LABELS),
    );
    if (pending.names(threadMailIds(members, byKey))) await pending.flush();
    let conversation = await existingConversation(trx, thread, threadIds(members), (id) => mailIdsBefore.get(id) ?? mailIdsInBatch.get(id));
    let lastImported: Date | null = null;
    for (const item of own) {
      const f = byKey.get(item.source_key)!;
      const mail = f.mail;
      const identity = identityOf(item);
      const knownInBatch = storedInBatch.get(identity.digest);
      if (knownInBatch && !conversation && pending.holds(knownInBatch.conversation_id)) await pending.flush();
      const known = knownInBatch ?? storedBefore.get(identity.digest) ?? (await importedBeforeDigests(trx, m, inboxId, identity, f.legacyId));
      if (known) {
        // Stored once: the inbox has this message already (an earlier copy, or it arrived by mail).
        settled.push({ sourceKey: item.source_key, status: 'duplicate', messageId: known.message_id, conversationId: known.conversation_id });
        await Promise.allSettled(f.written.map((k) => ctx.storage.delete(k)));
        conversation ??= await conversationById(trx, known.conversation_id);
        continue;
      }
      const sentAt = new Date(item.sent_at);
      const note = input.helpDesk?.get(Number(item.uid))?.note === true;
      const fromTeam = item.team === 1 || note;
      let author: Author;
      const details: Record<string, unknown> = { imported: { migration_id: m.id, folder: item.folder } };
      if (fromTeam) {
        const member = item.from_address ? input.team.members.get(item.from_address) : undefined;
        if (member) author = { type: 'member', personId: member };
        else {
          author = { type: 'system' };
          details.original_from = { name: mail.from.name ?? item.from_name, address: item.from_address };
        }
      } else {
        author = { type: 'contact', contactId: (await contactFor(item.from_address, mail.from.name ?? item.from_name)).contact.id };
      }
      if (!conversation) {
        const customer = await contactFor(
          thread.customer_address,
          thread.customer_address === item.from_address ? (mail.from.name ?? item.from_name) : thread.customer_name,
        );
        conversation = pending.createConversation({
          workspaceId: m.workspace_id,
          inboxId,
          contactId: customer.contact.id,
          channelId: m.channel_id,
          source: 'email',
          subject: mail.subject ?? thread.subject,
          status: 'open',
          imported: true,
          labels,
          createdAt: sentAt,
        });
      }
      const cids = new Map(f.files.filter((x) => x.contentId).map((x) => [x.contentId!, x.id]));
      const newMessage: NewMessage = {
        id: newId('m', sentAt.getTime()),
        kind: note ? 'note' : 'message',
        direction: fromTeam ? 'out' : 'in',
        author,
        body: mail.text,
        html: mail.html ? sanitizeMailHtml(mail.html, cids) : null,
        subject: mail.subject,
        automatic: mail.automatic,
        details,
        mail: {
          messageId: identity.messageId,
          references: mail.references,
          replyTo: fromTeam ? null : (mail.replyTo ?? item.from_address),
          headers: { ...mailHeadersOf(mail), message_id: identity.messageId },
        },
        files: f.files,
        attachmentsOmitted: f.omitted,
        raw: f.rawStored,
        createdAt: sentAt,
        importedAt: now,
      };
      const registration = { workspaceId: m.workspace_id, inboxId, mail: identity };
      let messageId: string;
      if (pending.holds(conversation.id)) {
        ({ conversation, messageId } = pending.addMessage(conversation.id, newMessage, registration));
      } else {
        // An earlier conversation: written at once (the batch's own are written first, so the order stays).
        await pending.flush();
        const inserted = await insertMessage(tx, conversation, newMessage);
        conversation = inserted.conversation;
        messageId = inserted.message.id;
        if (!(await registerStoredMail(tx, { ...registration, conversationId: conversation.id, messageId }))) throw new StoredMeanwhile();
      }
      stored(identity, { conversation_id: conversation.id, message_id: messageId });
      settled.push({ sourceKey: item.source_key, status: 'copied', messageId, conversationId: conversation.id });
      copied++;
      if (!lastImported || sentAt > lastImported) lastImported = sentAt;
    }
    if (conversation?.imported === 1 && lastImported) {
      if (pending.holds(conversation.id)) pending.settle(conversation.id, m);
      else await settleImportedConversation(tx, m, conversation, labels);
    }
    threadsDone.push({ threadKey: thread.thread_key, conversationId: conversation?.id ?? null });
  }
  await pending.flush();
  if (createdContacts.length) {
    await trx
      .insertInto('mailbox_migration_contacts')
      .values(createdContacts.map((id) => ({ migration_id: m.id, contact_id: id, created_at: iso(now) })))
      .onConflict((oc) => oc.columns(['migration_id', 'contact_id']).doNothing())
      .execute();
  }
  await markItemsSettled(trx, m.id, settled, iso(now));
  await markThreadsCopied(trx, m.id, threadsDone);
  return { copied, change: progressChangeOf(input, settled) };
}

/** What writeBatch changed, as loadProgress counts it (mail received while syncing, `new_mail`, is not history). */
function progressChangeOf(input: Pick<BatchInput, 'items' | 'threads' | 'failed' | 'gone'>, settled: readonly SettledItem[]): ProgressChange {
  const history = new Map(input.items.flatMap((i) => (i.new_mail ? [] : [[i.source_key, i] as const])));
  const change: ProgressChange = { copied: 0, copied_bytes: 0, duplicates: 0, failed: 0, skipped: 0, conversations: input.threads.length };
  for (const key of input.failed.keys()) if (history.has(key)) change.failed++;
  for (const key of input.gone) if (history.has(key)) change.skipped++;
  for (const s of settled) {
    const item = history.get(s.sourceKey);
    if (!item) continue;
    if (s.status === 'duplicate') change.duplicates++;
    else {
      change.copied++;
      change.copied_bytes += Number(item.size);
    }
  }
  return change;
}

interface SettledItem {
  sourceKey: string;
  status: 'copied' | 'duplicate';
  messageId: string;
  conversationId: string;
}

/** Rows per statement of the batched updates below. */
const UPDATE_CHUNK = 200;

/** Copied items (their error cleared) and duplicates (skip reason `duplicate`), one statement per status and chunk. */
async function markItemsSettled(trx: Transaction<Database>, migrationId: string, settled: SettledItem[], copiedAt: string): Promise<void> {
  for (const status of ['copied', 'duplicate'] as const) {
    const rows = settled.filter((s) => s.status === status);
    for (let i = 0; i < rows.length; i += UPDATE_CHUNK) {
      const values = sql.join(rows.slice(i, i + UPDATE_CHUNK).map((r) => sql`(${r.sourceKey}, ${r.messageId}, ${r.conversationId})`));
      const more = status === 'copied' ? sql`error = null` : sql`skip_reason = ${'duplicate'}`;
      await sql`update mailbox_migration_items as i
        set status = ${status}, message_id = v.column2, conversation_id = v.column3, copied_at = ${copiedAt}, ${more}
        from (values ${values}) as v
        where i.migration_id = ${migrationId} and i.source_key = v.column1`.execute(trx);
    }
  }
}

/**
 * An item's status in a condition that must not choose the (migration_id, status) index: without
 * statistics SQLite took it for "this thread's planned items" and read every planned item of the
 * migration per thread (5.4 s of a 10,000-message copy); the thread index finds a thread's few items.
 */
const STATUS_NOT_INDEXED = sql`coalesce(i.status, '')`;

/**
 * The batch's threads are copied; those that went into a conversation name it. A thread with an item
 * planned again meanwhile (a retry committed after the batch was chosen, before it was written)
 * stays planned, so a later batch copies that item, into the conversation named here.
 */
async function markThreadsCopied(
  trx: Transaction<Database>,
  migrationId: string,
  threads: { threadKey: string; conversationId: string | null }[],
): Promise<void> {
  for (let i = 0; i < threads.length; i += UPDATE_CHUNK) {
    const values = sql.join(threads.slice(i, i + UPDATE_CHUNK).map((t) => sql`(${t.threadKey}, ${t.conversationId})`));
    await sql`update mailbox_migration_threads as t
      set status = case when exists (select 1 from mailbox_migration_items as i
            where i.migration_id = t.migration_id and i.thread_key = t.thread_key and ${STATUS_NOT_INDEXED} = ${'planned'})
          then ${'planned'} else ${'copied'} end,
        conversation_id = coalesce(v.column2, t.conversation_id)
      from (values ${values}) as v
      where t.migration_id = ${migrationId} and t.thread_key = v.column1`.execute(trx);
  }
}

/** The made-up Message-ID a message without one was imported under before mail digests were kept (migration 0017). */
function legacyIdOf(raw: Buffer): string {
  return `sha256-${createHash('sha256').update(raw).digest('hex')}@import.svc`;
}

/** A message without Message-ID imported before mail digests were kept, registered under `legacyIdOf` its source. */
async function importedBeforeDigests(
  trx: Transaction<Database>,
  m: MigrationRow,
  inboxId: string,
  mail: MailIdentity,
  legacyId: string | null,
): Promise<StoredCopy | undefined> {
  if (mail.messageId || !legacyId) return undefined;
  return storedCopyByMailId(trx, m.workspace_id, inboxId, legacyId);
}

/**
 * The conversation a thread goes into: the one it went into before, or one holding a message it
 * names (`conversationOf` a Message-ID, as the inbox's mail_ids hold it now).
 */
async function existingConversation(
  trx: Transaction<Database>,
  thread: { conversation_id: string | null },
  mailIds: readonly string[],
  conversationOf: (rfcId: string) => string | undefined,
): Promise<ConversationRow | undefined> {
  if (thread.conversation_id) {
    const row = await conversationById(trx, thread.conversation_id);
    if (row) return row;
  }
  const ids = new Set(mailIds.flatMap((id) => conversationOf(id) ?? []));
  if (ids.size === 0) return undefined;
  return firstConversationOf(trx, [...ids]);
}

/**
 * After messages were imported into an imported conversation: labels, the status by the spec's
 * rule, the divider after the last imported message, and updated_at = now (retention of imported
 * mail counts from the day of the import). A conversation the batch creates is settled the same
 * way by PendingWrites.settle, without reading anything back.
 */
async function settleImportedConversation(
  tx: { db: Transaction<Database>; clock: Ctx['clock'] },
  m: MigrationRow,
  conversation: ConversationRow,
  labels: string[],
): Promise<void> {
  const trx = tx.db;
  const now = tx.clock.now();
  await addConversationLabels(trx, conversation.id, labels);
  const lastImported = await newestMessage(trx, conversation.id, { importedOnly: true });
  if (!lastImported) return;
  const last = (await newestMessage(trx, conversation.id))!;
  const status = importedStatus({ lastMessageAt: new Date(last.created_at), teamWroteLast: last.direction === 'out', closeAfterDays: m.close_after_days, now });
  // The divider sits right after the last imported message (moved when more history arrives).
  await replaceImportDivider(trx, conversation, importDivider(m, lastImported.created_at, now));
  await setConversationStatus(trx, conversation.id, status, now);
}

function importDivider(m: Pick<MigrationRow, 'id'>, lastImportedAt: string, now: Date) {
  return {
    details: JSON.stringify({ type: DIVIDER_TYPE, migration_id: m.id }),
    body: 'Imported history ends here. Earlier messages were copied from the old mailbox.',
    at: new Date(new Date(lastImportedAt).getTime() + 1),
    importedAt: now,
  };
}

class StoredMeanwhile extends Error {
  constructor() {
    super('the same mail was stored in the inbox meanwhile; the batch is copied again');
  }
}

/** The Message-IDs a thread's conversation is looked up by (as existingConversation gathers them). */
function threadMailIds(members: ItemRow[], byKey: Map<string, Fetched>): string[] {
  const ids: string[] = [];
  for (const i of members) {
    if (i.rfc_id) ids.push(i.rfc_id);
    for (const r of i.refs ? (JSON.parse(i.refs) as string[]) : []) ids.push(r);
    const mail = byKey.get(i.source_key)?.mail;
    if (mail?.messageId) ids.push(mail.messageId);
  }
  return ids;
}

interface PendingConversation {
  conversation: ConversationRow;
  labels: string[];
  /** Its newest message of kind message: its newest imported one too, as every message of it is imported. */
  newest?: { id: string; direction: 'in' | 'out'; created_at: string };
}

/**
 * The conversations a batch creates, with their messages, attachments, dividers and stored-mail
 * records, kept until flush writes them in a few multi-row inserts (in the batch's transaction).
 * What later steps of the batch would read of them is answered from here (names) or from the batch's
 * own records (writeBatch's storedInBatch), or they are written first (flush).
 */
class PendingWrites {
  private conversations = new Map<string, PendingConversation>();
  private messages: Insertable<MessageRow>[] = [];
  private attachments: AttachmentRow[] = [];
  private stored: Parameters<typeof registerStoredMails>[1][number][] = [];
  private mailIds = new Set<string>();

  constructor(private readonly tx: { db: Transaction<Database>; clock: Ctx['clock'] }) {}

  holds(conversationId: string): boolean {
    return this.conversations.has(conversationId);
  }

  /** Whether any of these Message-IDs is one of a pending message. */
  names(ids: readonly string[]): boolean {
    return this.mailIds.size > 0 && ids.some((id) => this.mailIds.has(id));
  }

  createConversation(input: NewConversation): ConversationRow {
    const { conversation, labels } = newConversationRow(this.tx, input);
    this.conversations.set(conversation.id, { conversation, labels });
    return conversation;
  }

  addMessage(
    conversationId: string,
    input: NewMessage,
    registration: { workspaceId: string; inboxId: string; mail: MailIdentity },
  ): { conversation: ConversationRow; messageId: string } {
    const entry = this.conversations.get(conversationId)!;
    const { message, attachments, times } = newMessageRows(this.tx, entry.conversation, input);
    entry.conversation = { ...entry.conversation, ...times };
    this.messages.push(message);
    this.attachments.push(...attachments);
    const newest = entry.newest;
    if (
      message.kind === 'message' &&
      (!newest || message.created_at > newest.created_at || (message.created_at === newest.created_at && message.id > newest.id))
    ) {
      entry.newest = { id: message.id, direction: message.direction, created_at: message.created_at };
    }
    this.stored.push({ ...registration, conversationId, messageId: message.id });
    if (registration.mail.messageId) this.mailIds.add(registration.mail.messageId);
    return { conversation: entry.conversation, messageId: message.id };
  }

  /** settleImportedConversation of a pending conversation: its labels are pending already, its newest message is known. */
  settle(conversationId: string, m: Pick<MigrationRow, 'id' | 'close_after_days'>): void {
    const entry = this.conversations.get(conversationId)!;
    if (!entry.newest) return;
    const now = this.tx.clock.now();
    const status = importedStatus({
      lastMessageAt: new Date(entry.newest.created_at),
      teamWroteLast: entry.newest.direction === 'out',
      closeAfterDays: m.close_after_days,
      now,
    });
    this.messages.push(importDividerRow(entry.conversation, importDivider(m, entry.newest.created_at, now)));
    entry.conversation = { ...entry.conversation, status, updated_at: iso(now) };
  }

  async flush(): Promise<void> {
    if (this.conversations.size === 0) return;
    const db = this.tx.db;
    await insertConversationRows(db, [...this.conversations.values()]);
    await insertMessageRows(db, this.messages, this.attachments);
    if (!(await registerStoredMails(this.tx, this.stored))) throw new StoredMeanwhile();
    this.conversations = new Map();
    this.messages = [];
    this.attachments = [];
    this.stored = [];
    this.mailIds = new Set();
  }
}
