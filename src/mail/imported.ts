// Mail ids as the mailbox migration's copy reads them: which conversations hold messages with these
// Message-IDs, and a copy registered under an id the import made up (before mail digests, 0017).
import type { Db } from '../db/schema.js';
import type { StoredCopy } from './duplicates.js';

/** The conversations of the inbox holding a message with one of these Message-IDs. */
export async function conversationIdsOfMailIds(db: Db, workspaceId: string, inboxId: string, rfcIds: readonly string[]): Promise<string[]> {
  if (rfcIds.length === 0) return [];
  const rows = await db
    .selectFrom('mail_ids')
    .select('conversation_id')
    .distinct()
    .where('workspace_id', '=', workspaceId)
    .where('inbox_id', '=', inboxId)
    .where('rfc_id', 'in', [...rfcIds])
    .execute();
  return rows.map((r) => r.conversation_id);
}

/** The message registered in the inbox under exactly this Message-ID. */
export async function storedCopyByMailId(db: Db, workspaceId: string, inboxId: string, rfcId: string): Promise<StoredCopy | undefined> {
  return db
    .selectFrom('mail_ids')
    .select(['conversation_id', 'message_id'])
    .where('workspace_id', '=', workspaceId)
    .where('rfc_id', '=', rfcId)
    .where('inbox_id', '=', inboxId)
    .executeTakeFirst();
}
