// The participants of an e-mail conversation (issue 33): the contact and every outside address that
// took part (From, To and Cc of inbound mail, what the team added), each To or Cc. They decide where
// a reply goes by default (src/mail/reply-recipients.ts). The team's own addresses never are one.

import type { Db, Participant } from '../db/schema.js';
import type { ConversationRow } from './format.js';

export type { Participant };

/** At most this many participants (and recipients of one message: To, Cc and Bcc together). */
export const MAX_RECIPIENTS = 50;

/** The stored list; null when the conversation never had one (chat, or e-mail from before 0036). */
export function participantsOf(row: Pick<ConversationRow, 'participants'>): Participant[] | null {
  return row.participants ? (JSON.parse(row.participants) as Participant[]) : null;
}

/**
 * The list with the additions that are new (addresses compared without case); a known address keeps
 * its role and gains a name it lacked. Additions past MAX_RECIPIENTS are dropped.
 */
export function withParticipants(list: readonly Participant[], additions: readonly Participant[]): Participant[] {
  const out = list.map((p) => ({ ...p }));
  for (const a of additions) {
    const known = out.find((p) => p.address.toLowerCase() === a.address.toLowerCase());
    if (known) {
      if (!known.name && a.name) known.name = a.name;
    } else if (out.length < MAX_RECIPIENTS) out.push({ name: a.name, address: a.address, role: a.role });
  }
  return out;
}

export function sameParticipants(a: readonly Participant[] | null, b: readonly Participant[] | null): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Stores the list on the conversation (inside the caller's transaction); returns the row as changed. */
export async function saveParticipants(db: Db, conversation: ConversationRow, list: readonly Participant[]): Promise<ConversationRow> {
  const participants = JSON.stringify(list);
  await db.updateTable('conversations').set({ participants }).where('id', '=', conversation.id).execute();
  return { ...conversation, participants };
}
