// The same mail is stored once per inbox, however often and by whichever way it arrives: a relay
// retrying, forwarded and routed at once, in the old mailbox while a migration syncs, imported
// twice. "The same" is decided by mailDigest (Message-ID, Date, From, To, Subject and body), not by
// the Message-ID alone: a different message that reuses a Message-ID is stored as well, and the
// first message keeps that Message-ID's place in threading (mail_ids).
import type { Db } from '../db/schema.js';
import { iso } from '../platform/clock.js';
import { registerMailId, type Tx } from '../conversations/service.js';

export interface MailIdentity {
  messageId: string | null;
  digest: string;
}

export interface StoredCopy {
  conversation_id: string;
  message_id: string;
}

/** The message an inbox already holds for this mail, if any. */
export async function findStoredCopy(db: Db, target: { workspaceId: string; inboxId: string }, mail: MailIdentity): Promise<StoredCopy | undefined> {
  const same = await db
    .selectFrom('mail_digests')
    .select(['conversation_id', 'message_id'])
    .where('workspace_id', '=', target.workspaceId)
    .where('inbox_id', '=', target.inboxId)
    .where('digest', '=', mail.digest)
    .executeTakeFirst();
  if (same || !mail.messageId) return same;
  // Mail we sent ourselves, or stored before digests were kept: the Message-ID alone decides.
  const byId = await db
    .selectFrom('mail_ids')
    .select(['conversation_id', 'message_id', 'digest'])
    .where('workspace_id', '=', target.workspaceId)
    .where('rfc_id', '=', mail.messageId)
    .where('inbox_id', '=', target.inboxId)
    .executeTakeFirst();
  return byId && byId.digest == null ? { conversation_id: byId.conversation_id, message_id: byId.message_id } : undefined;
}

/**
 * Records a stored mail in the caller's transaction: its digest, and its Message-ID for threading
 * unless another message holds that id already. False when the inbox holds the same mail (another
 * transaction stored it meanwhile): the caller must then undo its work.
 */
export async function registerStoredMail(tx: Tx, input: { workspaceId: string; inboxId: string; conversationId: string; messageId: string; mail: MailIdentity }): Promise<boolean> {
  const { workspaceId, inboxId, conversationId, messageId, mail } = input;
  const r = await tx.db
    .insertInto('mail_digests')
    .values({ workspace_id: workspaceId, inbox_id: inboxId, digest: mail.digest, conversation_id: conversationId, message_id: messageId, created_at: iso(tx.clock.now()) })
    .onConflict((oc) => oc.columns(['workspace_id', 'inbox_id', 'digest']).doNothing())
    .executeTakeFirst();
  if (Number(r.numInsertedOrUpdatedRows ?? 0) !== 1) return false;
  if (!mail.messageId) return true;
  if (await registerMailId(tx, { workspaceId, inboxId, rfcId: mail.messageId, conversationId, messageId, digest: mail.digest })) return true;
  // The id is taken: by mail we sent or stored before digests (the same message after all), or by
  // a different message reusing it (this one is kept, without taking over the id's threading).
  const holder = await tx.db
    .selectFrom('mail_ids')
    .select('digest')
    .where('workspace_id', '=', workspaceId)
    .where('rfc_id', '=', mail.messageId)
    .where('inbox_id', '=', inboxId)
    .executeTakeFirstOrThrow();
  return holder.digest != null;
}
