// Threading: a mail joins the conversation of a Message-ID it names in In-Reply-To or References
// (every one of them, not just the first) among the ids we stored or sent in the workspace; never
// by subject. In-Reply-To counts before References, newer references before older ones, and a
// conversation in the receiving inbox before one that was moved to another inbox.
import type { ConversationRow } from '../conversations/format.js';
import { conversationById, inboxesOfConversations } from '../conversations/store.js';
import type { Db } from '../db/schema.js';

const MAX_LOOKUP = 200;

export async function findThread(
  db: Db,
  input: { workspaceId: string; inboxId: string; inReplyTo: string[]; references: string[] },
): Promise<ConversationRow | undefined> {
  const ordered = [...new Set([...input.inReplyTo, ...[...input.references].reverse()])].slice(0, MAX_LOOKUP);
  if (ordered.length === 0) return undefined;
  const ids = await db
    .selectFrom('mail_ids')
    .select(['rfc_id', 'conversation_id'])
    .where('workspace_id', '=', input.workspaceId)
    .where('rfc_id', 'in', ordered)
    .execute();
  const inboxOf = await inboxesOfConversations(
    db,
    ids.map((m) => m.conversation_id),
  );
  const matches = ids.flatMap((m) => {
    const inbox_id = inboxOf.get(m.conversation_id);
    return inbox_id === undefined ? [] : [{ ...m, inbox_id }];
  });
  if (matches.length === 0) return undefined;
  const rank = (m: (typeof matches)[number]) => (m.inbox_id === input.inboxId ? 0 : MAX_LOOKUP) + ordered.indexOf(m.rfc_id);
  const best = matches.reduce((a, b) => (rank(b) < rank(a) ? b : a));
  return conversationById(db, best.conversation_id);
}
