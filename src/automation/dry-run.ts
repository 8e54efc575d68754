// The dry run (issue 36): what a rule would have done to the live conversations created in the last
// N days, as each stands now, through the same facts, conditions and action plan a real run uses
// (./conditions.ts, ./actions.ts) — so a real run on the same data does the same. Nothing is written.
import { type Access, authorize } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ConversationRow } from '../conversations/format.js';
import { conversationsCreatedSince } from '../conversations/store.js';
import { DAY } from '../platform/clock.js';
import { notFound } from '../platform/errors.js';
import { planActions } from './actions.js';
import { conditionsHold, loadFacts } from './conditions.js';
import { findRule, parseRule, type Rule } from './rules.js';
import type { Action } from './schema.js';

/** The most conversations one dry run looks at (the newest of the period). */
export const DRY_RUN_MAX_CONVERSATIONS = 5000;

/** A time-based rule only acts on conversations in its state now. */
function inState(rule: Rule, c: ConversationRow): boolean {
  switch (rule.trigger.type) {
    case 'pending_for':
      return c.status === 'pending';
    case 'open_unassigned_for':
      return c.status === 'open' && c.assignee_id === null;
    case 'no_customer_answer_for':
      return c.status !== 'closed';
    default:
      return true;
  }
}

export async function dryRunRule(ctx: Pick<Ctx, 'db' | 'clock'>, access: Access, ruleId: string, input: { days?: number; limitExamples?: number }) {
  authorize(access, 'automation:manage');
  const row = await findRule(ctx.db, access.workspaceId, ruleId);
  if (!row) throw notFound('automation rule');
  const rule = parseRule(row);
  const now = ctx.clock.now();
  const since = new Date(now.getTime() - (input.days ?? 30) * DAY);
  const limitExamples = input.limitExamples ?? 10;
  const conversations = await conversationsCreatedSince(ctx.db, access.workspaceId, since, DRY_RUN_MAX_CONVERSATIONS);
  const counts = new Map<string, { action: Action; count: number }>();
  for (const a of rule.actions) counts.set(JSON.stringify(a), { action: a, count: 0 });
  const examples: { conversation_id: string; subject: string | null; actions: Action[] }[] = [];
  let matched = 0;
  for (const c of conversations) {
    if (c.imported || c.spam || !inState(rule, c)) continue;
    const facts = await loadFacts(ctx.db, c, { at: now });
    // A message trigger looks at the customer's message at its own time (business hours).
    if (facts.message && (rule.trigger.type === 'customer_message' || rule.trigger.type === 'conversation_created'))
      facts.at = new Date(facts.message.created_at);
    if (!(await conditionsHold(ctx.db, rule.conditions, facts))) continue;
    const plan = await planActions(ctx.db, facts, rule.actions, { rule });
    if (plan.effective.length === 0) continue;
    matched++;
    for (const a of plan.effective) counts.get(JSON.stringify(a))!.count++;
    if (examples.length < limitExamples) examples.push({ conversation_id: c.id, subject: c.subject, actions: plan.effective });
  }
  return { evaluated: conversations.length, matched, summary: [...counts.values()].filter((s) => s.count > 0), examples };
}
