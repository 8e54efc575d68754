// Running rules (issue 36): the `automation.run` job (an event's rules, in order) and the
// `automation.timer` job (one time-based rule, once its state lasted). Each run is one transaction:
// its run-log rows, the data changes and the stored work for what leaves the server commit
// together. Every run-log row carries a key (event and rule, or timer), inserted first: a job run
// again after a crash between the commit and the job's removal finds its rows and does nothing.
import type { Ctx } from '../context.js';
import type { ConversationRow } from '../conversations/format.js';
import { changedSince, conversationById, findMessage, wroteSince } from '../conversations/store.js';
import type { Db } from '../db/schema.js';
import { announceEvents } from '../events/service.js';
import type { Clock } from '../platform/clock.js';
import { iso } from '../platform/clock.js';
import { newId } from '../platform/ids.js';
import type { JobKind } from '../platform/jobs.js';
import { applyActions, planActions } from './actions.js';
import { conditionsHold, type Facts, loadFacts } from './conditions.js';
import { RUN_JOB, type RunJobPayload, TIMER_JOB, type TimerJobPayload } from './reaction.js';
import { enabledRules, findRule, parseRule, type Rule } from './rules.js';
import type { Action } from './schema.js';

/** A chain of rule runs (a rule's change starting rules again) stops at this depth, logged as loop_guard. */
export const MAX_DEPTH = 3;

type Tx = { db: Db; clock: Clock };
type Outcome = { outcome: 'acted' | 'no_match' | 'skipped'; reason: string | null; actions: Action[] };

/** Claims the run-log row under `key`; false when a run with this key was logged already. */
async function claimRun(tx: Tx, rule: Rule, conversationId: string, trigger: string, key: string): Promise<string | null> {
  const id = newId('arun', tx.clock.now().getTime());
  const r = await tx.db
    .insertInto('automation_runs')
    .values({
      id,
      workspace_id: rule.workspaceId,
      rule_id: rule.id,
      rule_name: rule.name,
      conversation_id: conversationId,
      trigger,
      outcome: 'skipped',
      reason: 'running',
      actions: '[]',
      run_key: key,
      created_at: iso(tx.clock.now()),
    })
    .onConflict((oc) => oc.column('run_key').doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) === 0 ? null : id;
}

async function settleRun(tx: Tx, runId: string, ruleId: string, o: Outcome): Promise<void> {
  await tx.db
    .updateTable('automation_runs')
    .set({ outcome: o.outcome, reason: o.reason, actions: JSON.stringify(o.actions) })
    .where('id', '=', runId)
    .execute();
  if (o.outcome === 'acted')
    await tx.db
      .updateTable('automation_rules')
      .set({ last_run_at: iso(tx.clock.now()) })
      .where('id', '=', ruleId)
      .execute();
}

/** Evaluates one rule on the facts and, when it matches, applies what changes something. */
export async function runRule(
  tx: Tx,
  rule: Rule,
  facts: Facts,
  chain: { depth: number; ruleIds: readonly string[] },
): Promise<Outcome & { conversation: ConversationRow }> {
  const conversation = facts.conversation;
  if (conversation.imported || conversation.spam) return { outcome: 'skipped', reason: conversation.imported ? 'imported' : 'spam', actions: [], conversation };
  if (!(await conditionsHold(tx.db, rule.conditions, facts))) return { outcome: 'no_match', reason: 'conditions_not_met', actions: [], conversation };
  const plan = await planActions(tx.db, facts, rule.actions, { rule });
  if (plan.effective.length === 0) return { outcome: 'no_match', reason: plan.held[0] ?? 'nothing_to_change', actions: [], conversation };
  const applied = await applyActions(tx, facts, plan, {
    rule: { id: rule.id, name: rule.name },
    author: { type: 'system' },
    personId: null,
    automation: { depth: chain.depth + 1, ruleIds: [...chain.ruleIds, rule.id] },
  });
  if (applied.done.length === 0) return { outcome: 'no_match', reason: 'nothing_to_change', actions: [], conversation: applied.conversation };
  return { outcome: 'acted', reason: null, actions: applied.done, conversation: applied.conversation };
}

/** The rules of one event, in order, each seeing what the ones before it changed. */
export async function runEventRules(ctx: Pick<Ctx, 'db' | 'clock' | 'hub'>, p: RunJobPayload): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    const rules = (await enabledRules(trx, p.workspaceId)).filter((r) => r.trigger.type === p.trigger);
    let conversation = await conversationById(trx, p.conversationId);
    if (!conversation || conversation.workspace_id !== p.workspaceId || rules.length === 0) return;
    const message = p.messageId ? await findMessage(trx, conversation.id, p.messageId) : undefined;
    // History copied by a migration is never acted on, nor quiet mail.
    if (conversation.imported || message?.imported_at) return;
    const at = message && (p.trigger === 'customer_message' || p.trigger === 'team_message') ? new Date(message.created_at) : ctx.clock.now();
    for (const rule of rules) {
      const runId = await claimRun(tx, rule, conversation.id, p.trigger, `${p.eventId}:${rule.id}`);
      if (!runId) continue;
      if (p.depth >= MAX_DEPTH || p.ruleIds.includes(rule.id)) {
        const reason = p.depth >= MAX_DEPTH ? `loop_guard: depth ${MAX_DEPTH} reached` : 'loop_guard: its own change';
        await settleRun(tx, runId, rule.id, { outcome: 'skipped', reason, actions: [] });
        continue;
      }
      const facts = await loadFacts(trx, conversation, { message: message?.direction === 'in' ? message : undefined, at });
      const result = await runRule(tx, rule, facts, p);
      conversation = result.conversation;
      await settleRun(tx, runId, rule.id, result);
    }
  });
  announceEvents(ctx);
}

/** Whether the state a timer waited on held from `since` until now. */
async function stateLasted(db: Db, rule: Rule, c: ConversationRow, since: string): Promise<boolean> {
  switch (rule.trigger.type) {
    case 'pending_for':
      return c.status === 'pending' && !(await changedSince(db, c.id, since, ['status']));
    case 'open_unassigned_for':
      return c.status === 'open' && c.assignee_id === null && !(await changedSince(db, c.id, since, ['status', 'assignee_id']));
    case 'no_customer_answer_for':
      return c.status !== 'closed' && !(await wroteSince(db, c.id, since));
    default:
      return false;
  }
}

export async function runTimerRule(ctx: Pick<Ctx, 'db' | 'clock' | 'hub'>, p: TimerJobPayload): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    const row = await findRule(trx, p.workspaceId, p.ruleId);
    const conversation = await conversationById(trx, p.conversationId);
    if (!row || row.enabled !== 1 || !conversation || conversation.imported || conversation.spam) return;
    const rule = parseRule(row);
    const runId = await claimRun(tx, rule, conversation.id, rule.trigger.type, `timer:${p.ruleId}:${p.conversationId}:${p.since}`);
    if (!runId) return;
    if (!(await stateLasted(trx, rule, conversation, p.since))) {
      await settleRun(tx, runId, rule.id, { outcome: 'skipped', reason: 'state_changed', actions: [] });
      return;
    }
    const facts = await loadFacts(trx, conversation, { at: ctx.clock.now() });
    await settleRun(tx, runId, rule.id, await runRule(tx, rule, facts, { depth: 0, ruleIds: [] }));
  });
  announceEvents(ctx);
}

export function automationJobs(ctx: Ctx): JobKind[] {
  return [
    { kind: RUN_JOB, run: (p: RunJobPayload) => runEventRules(ctx, p), backoffMs: (n) => (n < 5 ? n * 30_000 : undefined) },
    { kind: TIMER_JOB, run: (p: TimerJobPayload) => runTimerRule(ctx, p), backoffMs: (n) => (n < 5 ? n * 30_000 : undefined) },
  ];
}
