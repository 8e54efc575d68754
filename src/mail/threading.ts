// Threading: a mail joins the conversation of a Message-ID it names in In-Reply-To or References
// (every one of them, not just the first) among the ids we stored or sent in the workspace; never
// by subject. In-Reply-To counts before References, newer references before older ones, and a
// conversation in the receiving inbox before one that was moved to another inbox.
import type { ConversationRow } from '../conversations/format.js';
import type { Db } from '../db/schema.js';

const MAX_LOOKUP = 200;

export async function findThread(db: Db, input: { workspaceId: string; inboxId: string; inReplyTo: string[]; references: string[] }): Promise<ConversationRow | undefined> {
  const ordered = [...new Set([...input.inReplyTo, ...[...input.references].reverse()])].slice(0, MAX_LOOKUP);
  if (ordered.length === 0) return undefined;
  const matches = await db
    .selectFrom('mail_ids')
    .innerJoin('conversations', 'conversations.id', 'mail_ids.conversation_id')
    .select(['mail_ids.rfc_id', 'mail_ids.conversation_id', 'conversations.inbox_id'])
    .where('mail_ids.workspace_id', '=', input.workspaceId)
    .where('mail_ids.rfc_id', 'in', ordered)
    .execute();
  if (matches.length === 0) return undefined;
  const rank = (m: (typeof matches)[number]) => (m.inbox_id === input.inboxId ? 0 : MAX_LOOKUP) + ordered.indexOf(m.rfc_id);
  const best = matches.reduce((a, b) => (rank(b) < rank(a) ? b : a));
  return db.selectFrom('conversations').selectAll().where('id', '=', best.conversation_id).executeTakeFirst();
}
