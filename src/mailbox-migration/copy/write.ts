// Writing one batch of the copy in one transaction (copy.ts reads it): contacts, conversations and
// messages, or the conversation a thread already has; the items' new status; the migration's progress.
import { type Insertable, sql, type Transaction } from 'kysely';
import { contactsByEmail, createAnonymousContact, findOrCreateContactByEmail } from '../../contacts/identify.js';
import { insertContactRows, type NewContact, newContactRows, normalizeAddress } from '../../contacts/service.js';
import type { ContactView } from '../../contacts/store.js';
import type { Ctx } from '../../context.js';
import type { AttachmentRow, ConversationRow, MessageRow } from '../../conversations/format.js';
import { conversationById, importDividerRow } from '../../conversations/imported.js';
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
} from '../../conversations/service.js';
import type { Database } from '../../db/schema.js';
import { findStoredCopies, type MailIdentity, mailIdentity, registerStoredMail, registerStoredMails, type StoredCopy } from '../../mail/duplicates.js';
import { conversationsByMailId } from '../../mail/imported.js';
import { mailHeadersOf } from '../../mail/parse.js';
import { sanitizeMailHtml } from '../../mail/sanitize.js';
import { iso } from '../../platform/clock.js';
import { newId } from '../../platform/ids.js';
import { type HelpDeskEntryMeta, helpDeskCustomerAttribute, tagLabels } from '../sources/helpdesk/store.js';
import type { MigrationRow, ProgressChange } from '../store.js';
import { existingConversation, importDivider, importedBeforeDigests, StoredMeanwhile, settleImportedConversation, threadMailIds } from './existing.js';
import type { Fetched, ItemRow } from './fetched.js';
import { importedStatus, labelsOfItem } from './plan.js';
import type { TeamAddresses } from './team.js';

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
export async function writeBatch(
  ctx: Ctx,
  trx: Transaction<Database>,
  m: MigrationRow,
  input: BatchInput,
): Promise<{ copied: number; change: ProgressChange }> {
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
    // A new contact is written with the batch's conversations (pending), as findOrCreateContactByEmail would make it.
    const { view, created } =
      key && found === null
        ? { view: pending.createContact({ workspaceId: m.workspace_id, name, emails: [key], attributes }), created: true }
        : await findOrCreateContactByEmail(tx, { workspaceId: m.workspace_id, email: address, name, attributes, quiet: true, found });
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
export async function markThreadsCopied(
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
export class PendingWrites {
  private contacts: ContactView[] = [];
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

  /** A new contact (insertContact's rows), written first at the flush: the conversations and messages name it. */
  createContact(input: NewContact): ContactView {
    const view = newContactRows(this.tx.clock, input);
    this.contacts.push(view);
    return view;
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
    if (this.conversations.size === 0 && this.contacts.length === 0) return;
    const db = this.tx.db;
    if (this.contacts.length) {
      await insertContactRows(db, this.contacts);
      this.contacts = [];
    }
    if (this.conversations.size === 0) return;
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
