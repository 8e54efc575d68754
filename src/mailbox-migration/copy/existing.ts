// The conversation an imported thread already has: mail the inbox received meanwhile, an earlier
// import (also from before mail digests were kept), and the divider that marks where imported history ends.
import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Ctx } from '../../context.js';
import type { ConversationRow } from '../../conversations/format.js';
import {
  addConversationLabels,
  conversationById,
  firstConversationOf,
  newestMessage,
  replaceImportDivider,
  setConversationStatus,
} from '../../conversations/imported.js';
import type { Database } from '../../db/schema.js';
import type { MailIdentity, StoredCopy } from '../../mail/duplicates.js';
import { storedCopyByMailId } from '../../mail/imported.js';
import type { MigrationRow } from '../store.js';
import type { Fetched, ItemRow } from './fetched.js';
import { importedStatus } from './plan.js';

export const DIVIDER_TYPE = 'imported_divider';
/** The made-up Message-ID a message without one was imported under before mail digests were kept (migration 0017). */
export function legacyIdOf(raw: Buffer): string {
  return `sha256-${createHash('sha256').update(raw).digest('hex')}@import.svc`;
}

/** A message without Message-ID imported before mail digests were kept, registered under `legacyIdOf` its source. */
export async function importedBeforeDigests(
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
export async function existingConversation(
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
export async function settleImportedConversation(
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

export function importDivider(m: Pick<MigrationRow, 'id'>, lastImportedAt: string, now: Date) {
  return {
    details: JSON.stringify({ type: DIVIDER_TYPE, migration_id: m.id }),
    body: 'Imported history ends here. Earlier messages were copied from the old mailbox.',
    at: new Date(new Date(lastImportedAt).getTime() + 1),
    importedAt: now,
  };
}

export class StoredMeanwhile extends Error {
  constructor() {
    super('the same mail was stored in the inbox meanwhile; the batch is copied again');
  }
}

/** The Message-IDs a thread's conversation is looked up by (as existingConversation gathers them). */
export function threadMailIds(members: ItemRow[], byKey: Map<string, Fetched>): string[] {
  const ids: string[] = [];
  for (const i of members) {
    if (i.rfc_id) ids.push(i.rfc_id);
    for (const r of i.refs ? (JSON.parse(i.refs) as string[]) : []) ids.push(r);
    const mail = byKey.get(i.source_key)?.mail;
    if (mail?.messageId) ids.push(mail.messageId);
  }
  return ids;
}
