// Report totals kept in the transaction of each change (a reaction to the recorded events), so a
// report over a year reads a few hundred rows instead of every message. Imported history records
// no events and so never counts; the reactions also leave out what the spec excludes: automatic
// mail, and imported conversations' first responses and closes (replies written live in an
// imported conversation count as replies).
//
// Days are UTC calendar days. member_id: the member who replied or closed, the assignee for
// ratings, '' for none (conversations opened, API keys without a member).
import { sql } from 'kysely';
import { businessMsBetween } from '../business-hours/schedule.js';
import { inboxHours } from '../business-hours/service.js';
import { closedInLatestChange, findConversation, firstMessage, teamRepliedBefore } from '../conversations/store.js';
import { reusableInsert } from '../db/reusable-query.js';
import type { ReportDaysTable } from '../db/schema.js';
import type { Reaction, ReactionTx, RecordedEvent } from '../events/reaction-types.js';
import { findInbox } from '../inboxes/store.js';

type Counter = 'opened' | 'closed' | 'replies' | 'ratings' | 'rating_sum' | 'rating_1' | 'rating_2' | 'rating_3' | 'rating_4' | 'rating_5';

export function dayOf(at: string | Date): string {
  return (typeof at === 'string' ? at : at.toISOString()).slice(0, 10);
}

const secondsBetween = (from: string, to: string) => Math.max(0, Math.round((Date.parse(to) - Date.parse(from)) / 1000));

/** The same span in the inbox's business hours (issue 35); the calendar span when the inbox is gone. */
async function businessSecondsBetween(tx: ReactionTx, inboxId: string, from: string, to: string): Promise<number> {
  const inbox = await findInbox(tx.db, inboxId);
  if (!inbox) return secondsBetween(from, to);
  return Math.round(businessMsBetween(await inboxHours(tx.db, inbox), new Date(from), new Date(to)) / 1000);
}

// One upsert per set of counters, compiled once: each counter adds the inserted row's value
// (`excluded`), so the statement's text does not depend on the numbers.
const upserts = new Map<string, ReturnType<typeof reusableInsert<'report_days'>>>();

function upsertFor(columns: readonly Counter[]) {
  const key = columns.join(',');
  let upsert = upserts.get(key);
  if (!upsert) {
    const update = Object.fromEntries(columns.map((column) => [column, sql`report_days.${sql.ref(column)} + ${sql.ref(`excluded.${column}`)}`]));
    upsert = reusableInsert('report_days', (q) => q.onConflict((oc) => oc.columns(['workspace_id', 'day', 'inbox_id', 'member_id']).doUpdateSet(update)));
    upserts.set(key, upsert);
  }
  return upsert;
}

async function add(
  tx: ReactionTx,
  key: Pick<ReportDaysTable, 'workspace_id' | 'day' | 'inbox_id' | 'member_id'>,
  counts: Partial<Record<Counter, number>>,
): Promise<void> {
  await upsertFor(Object.keys(counts) as Counter[])(tx.db, { ...key, ...counts });
}

interface ShownMessage {
  id: string;
  kind: string;
  direction: string;
  automatic: boolean;
  created_at: string;
  author: { type: string; member_id?: string | null };
}

/** Keeps report_days and report_durations. */
async function countForReports(tx: ReactionTx, event: RecordedEvent): Promise<void> {
  const shown = event.data.conversation as { id?: string; imported?: boolean; inbox_id?: string; created_at?: string } | undefined;
  if (!shown?.id) return;
  if (event.type === 'conversation.created') {
    if (shown.imported) return;
    // The event shows the conversation as it was just inserted in this transaction: no need to read it back.
    if (!shown.inbox_id || !shown.created_at) return;
    await add(tx, { workspace_id: event.workspaceId, day: dayOf(shown.created_at), inbox_id: shown.inbox_id, member_id: '' }, { opened: 1 });
    return;
  }
  if (event.type === 'message.created') {
    const m = event.data.message as ShownMessage | undefined;
    if (!m || m.kind !== 'message' || m.direction !== 'out' || m.automatic) return;
    if (m.author.type !== 'member' && m.author.type !== 'api_key') return;
    const conversation = await findConversation(tx.db, event.workspaceId, shown.id);
    if (!conversation) return;
    const member = m.author.type === 'member' ? (m.author.member_id ?? '') : '';
    const key = { workspace_id: event.workspaceId, day: dayOf(m.created_at), inbox_id: conversation.inbox_id, member_id: member };
    await add(tx, key, { replies: 1 });
    if (conversation.imported === 1) return;
    const first = await firstMessage(tx.db, conversation.id);
    if (!first || first.direction !== 'in' || (await teamRepliedBefore(tx.db, conversation.id, m.id))) return;
    await tx.db
      .insertInto('report_durations')
      .values({
        ...key,
        kind: 'first_response',
        conversation_id: conversation.id,
        seconds: secondsBetween(conversation.created_at, m.created_at),
        business_seconds: await businessSecondsBetween(tx, conversation.inbox_id, conversation.created_at, m.created_at),
      })
      .execute();
    return;
  }
  if (event.type === 'conversation.updated') {
    const closed = await closedInLatestChange(tx.db, shown.id);
    if (!closed) return;
    const conversation = await findConversation(tx.db, event.workspaceId, shown.id);
    if (!conversation) return;
    // Imported conversations stay out of closes (the spec), also when a member closes one later:
    // tidying up the imported history is not support work of the period.
    if (conversation.imported === 1) return;
    const key = { workspace_id: event.workspaceId, day: dayOf(closed.at), inbox_id: conversation.inbox_id, member_id: closed.personId ?? '' };
    await add(tx, key, { closed: 1 });
    await tx.db
      .insertInto('report_durations')
      .values({
        ...key,
        kind: 'resolution',
        conversation_id: conversation.id,
        seconds: secondsBetween(conversation.created_at, closed.at),
        business_seconds: await businessSecondsBetween(tx, conversation.inbox_id, conversation.created_at, closed.at),
      })
      .execute();
    return;
  }
  if (event.type === 'conversation.rated') {
    const rating = event.data.rating as { score?: number; rated_at?: string } | undefined;
    const score = rating?.score;
    if (!score || score < 1 || score > 5 || !rating.rated_at) return;
    const conversation = await findConversation(tx.db, event.workspaceId, shown.id);
    if (!conversation) return;
    const key = { workspace_id: event.workspaceId, day: dayOf(rating.rated_at), inbox_id: conversation.inbox_id, member_id: conversation.assignee_id ?? '' };
    await add(tx, key, { ratings: 1, rating_sum: score, [`rating_${score}`]: 1 } as Partial<Record<Counter, number>>);
  }
}

export const statisticsReaction: Reaction = { name: 'statistics', onEvent: countForReports };
