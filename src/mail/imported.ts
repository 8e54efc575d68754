// Mail ids as the mailbox migration's copy reads them: which conversations hold messages with these
// Message-IDs, and a copy registered under an id the import made up (before mail digests, 0017).
import type { Db } from '../db/schema.js';
import type { StoredCopy } from './duplicates.js';

/** Of these Message-IDs, those the inbox holds, with the conversation of each (one statement per 500 ids). */
export async function conversationsByMailId(db: Db, workspaceId: string, inboxId: string, rfcIds: readonly string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const unique = [...new Set(rfcIds)];
  for (let i = 0; i < unique.length; i += 500) {
    const rows = await db
      .selectFrom('mail_ids')
      .select(['rfc_id', 'conversation_id'])
      .where('workspace_id', '=', workspaceId)
      .where('inbox_id', '=', inboxId)
      .where('rfc_id', 'in', unique.slice(i, i + 500))
      .execute();
    for (const r of rows) found.set(r.rfc_id, r.conversation_id);
  }
  return found;
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
