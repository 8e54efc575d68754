// Message-IDs and digests that follow messages into another conversation (merge and split of
// conversations, src/conversations/merge.ts and split.ts): later mail naming them threads there.
import type { Db } from '../db/schema.js';

/** The mail identities moved, to be moved back exactly (by inbox and id). */
export interface MovedMail {
  ids: { inbox_id: string; rfc_id: string }[];
  digests: { inbox_id: string; digest: string }[];
}

const CHUNK = 500;

/** Moves the Message-IDs and digests of a conversation (all of them, or those of these messages) to another one. */
export async function moveMailOfConversation(db: Db, input: { from: string; to: string; messageIds?: readonly string[] }): Promise<MovedMail> {
  const ids: MovedMail['ids'] = [];
  const digests: MovedMail['digests'] = [];
  const groups = input.messageIds ? chunks(input.messageIds) : [null];
  for (const group of groups) {
    let qi = db.selectFrom('mail_ids').select(['inbox_id', 'rfc_id']).where('conversation_id', '=', input.from);
    let qd = db.selectFrom('mail_digests').select(['inbox_id', 'digest']).where('conversation_id', '=', input.from);
    let ui = db.updateTable('mail_ids').set({ conversation_id: input.to }).where('conversation_id', '=', input.from);
    let ud = db.updateTable('mail_digests').set({ conversation_id: input.to }).where('conversation_id', '=', input.from);
    if (group) {
      qi = qi.where('message_id', 'in', group);
      qd = qd.where('message_id', 'in', group);
      ui = ui.where('message_id', 'in', group);
      ud = ud.where('message_id', 'in', group);
    }
    ids.push(...(await qi.orderBy('inbox_id').orderBy('rfc_id').execute()));
    digests.push(...(await qd.orderBy('inbox_id').orderBy('digest').execute()));
    await ui.execute();
    await ud.execute();
  }
  return { ids, digests };
}

/** Moves exactly these identities from one conversation back to another (those still in `from`). */
export async function moveMailBack(db: Db, input: { moved: MovedMail; from: string; to: string }): Promise<void> {
  for (const [inbox, rfcIds] of byInbox(input.moved.ids.map((r) => [r.inbox_id, r.rfc_id]))) {
    for (const group of chunks(rfcIds))
      await db
        .updateTable('mail_ids')
        .set({ conversation_id: input.to })
        .where('conversation_id', '=', input.from)
        .where('inbox_id', '=', inbox)
        .where('rfc_id', 'in', group)
        .execute();
  }
  for (const [inbox, digests] of byInbox(input.moved.digests.map((r) => [r.inbox_id, r.digest]))) {
    for (const group of chunks(digests))
      await db
        .updateTable('mail_digests')
        .set({ conversation_id: input.to })
        .where('conversation_id', '=', input.from)
        .where('inbox_id', '=', inbox)
        .where('digest', 'in', group)
        .execute();
  }
}

function byInbox(pairs: [string, string][]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [inbox, value] of pairs) out.set(inbox, [...(out.get(inbox) ?? []), value]);
  return out;
}

function chunks<T>(list: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += CHUNK) out.push(list.slice(i, i + CHUNK));
  return out;
}
