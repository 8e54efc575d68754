// Moves one conversation's SLA in the caller's transaction: reads its inbox's policy and hours,
// advances the state (./engine.ts), stores it with a compare-and-set (a concurrent change makes
// this one a no-op), records the ended targets for reports and stores the `sla.check` job for the
// next warning or due time. Used by the reaction (messages, status changes) and by the job.
// Imports only the platform, the db and low-level modules, so the reaction registry may use it.
import { inboxHours } from '../business-hours/service.js';
import type { ConversationRow } from '../conversations/format.js';
import { storeConversationSla } from '../conversations/sla.js';
import type { Db } from '../db/schema.js';
import { findInbox } from '../inboxes/store.js';
import type { Clock } from '../platform/clock.js';
import { enqueue } from '../platform/jobs.js';
import { advance, nextCheck, type SlaInput, type SlaState, sortKey } from './engine.js';
import { policyFor } from './policy.js';

export const SLA_CHECK_JOB = 'sla.check';

export interface SlaCheckPayload {
  conversationId: string;
}

export type Moved = { state: SlaState | null; notices: ReturnType<typeof advance>['notices']; changed: boolean };

export async function moveSla(tx: { db: Db; clock: Clock }, row: ConversationRow, input: SlaInput): Promise<Moved> {
  const unchanged = { state: row.sla ? (JSON.parse(row.sla) as SlaState) : null, notices: [], changed: false };
  // Imported conversations never get due times; spam is no support work.
  if (row.imported === 1 || row.spam === 1) return unchanged;
  const policy = await policyFor(tx.db, row.inbox_id, row.priority);
  if (!policy && !row.sla) return unchanged;
  const inbox = await findInbox(tx.db, row.inbox_id);
  if (!inbox) return unchanged;
  const hours = await inboxHours(tx.db, inbox);
  const closed = row.status === 'closed';
  const active = row.status === 'open' && !row.snoozed_at;
  const moved = advance(unchanged.state, input, { active, closed, policy, hours });
  const text = moved.state ? JSON.stringify(moved.state) : null;
  const dueAt = sortKey(moved.state, closed);
  if (text === (row.sla ?? null) && dueAt === (row.sla_due_at ?? dueAt)) return unchanged;
  if (!(await storeConversationSla(tx.db, row.id, row.sla, { sla: text, dueAt }))) return unchanged;
  if (moved.outcomes.length)
    await tx.db
      .insertInto('sla_outcomes')
      .values(
        moved.outcomes.map((o) => ({
          conversation_id: row.id,
          target: o.target,
          due_at: o.due_at,
          workspace_id: row.workspace_id,
          inbox_id: row.inbox_id,
          member_id: row.assignee_id ?? '',
          outcome: o.outcome,
          at: o.at,
          day: o.at.slice(0, 10),
        })),
      )
      .onConflict((oc) => oc.columns(['conversation_id', 'target', 'due_at']).doNothing())
      .execute();
  const next = nextCheck(moved.state, closed);
  if (next)
    await enqueue(tx.db, tx.clock, {
      kind: SLA_CHECK_JOB,
      payload: { conversationId: row.id } satisfies SlaCheckPayload,
      runAt: next,
      uniqueKey: `${SLA_CHECK_JOB}:${row.id}`,
      sooner: true,
    });
  return { state: moved.state, notices: moved.notices, changed: true };
}
