// Running rules (issue 36): the `automation.run` job (an event's rules, in order) and the
// `automation.timer` job (one time-based rule, once its state lasted). Each run is one transaction:
// its run-log rows, the data changes and the stored work for what leaves the server commit
// together. Every run-log row carries a key (event and rule, or timer), inserted first: a job run
// again after a crash between the commit and the job's removal finds its rows and does nothing.

import { type ContactView, loadContactViews } from '../contacts/store.js';
import type { Ctx } from '../context.js';
import type { ConversationRow, MessageRow } from '../conversations/format.js';
import { changedSince, chunks, conversationById, conversationsByIds, findMessage, labelsOf, messagesByIds, wroteSince } from '../conversations/store.js';
import type { Db } from '../db/schema.js';
import { announceEvents } from '../events/service.js';
import { cachedReactionSetting } from '../events/settings-cache.js';
import type { Clock } from '../platform/clock.js';
import { iso } from '../platform/clock.js';
import { newId } from '../platform/ids.js';
import type { JobKind } from '../platform/jobs.js';
import { applyActions, planActions } from './actions.js';
import { conditionsHold, type Facts, factsOf, loadFacts } from './conditions.js';
import { RUN_JOB, type RunJobPayload, TIMER_JOB, type TimerJobPayload } from './reaction.js';
import { enabledRules, findRule, parseRule, type Rule } from './rules.js';
import type { Action } from './schema.js';

/** A chain of rule runs (a rule's change starting rules again) stops at this depth, logged as loop_guard. */
export const MAX_DEPTH = 3;

type Tx = { db: Db; clock: Clock };
type Outcome = { outcome: 'acted' | 'no_match' | 'skipped'; reason: string | null; actions: Action[] };

interface RunRow {
  rule: Rule;
  conversationId: string;
  trigger: string;
  key: string;
  result: Outcome;
}

/** Whether runs under these keys were logged already (a job run again after its commit). */
async function alreadyRun(db: Db, keys: readonly string[]): Promise<boolean> {
  if (keys.length === 0) return false;
  const row = await db.selectFrom('automation_runs').select('id').where('run_key', 'in', keys).limit(1).executeTakeFirst();
  return !!row;
}

/** The run log of one job, in one statement, and last_run_at of the rules that acted. */
async function logRuns(tx: Tx, rows: readonly RunRow[]): Promise<void> {
  if (rows.length === 0) return;
  const now = tx.clock.now();
  await tx.db
    .insertInto('automation_runs')
    .values(
      rows.map((r) => ({
        id: newId('arun', now.getTime()),
        workspace_id: r.rule.workspaceId,
        rule_id: r.rule.id,
        rule_name: r.rule.name,
        conversation_id: r.conversationId,
        trigger: r.trigger,
        outcome: r.result.outcome,
        reason: r.result.reason,
        actions: JSON.stringify(r.result.actions),
        run_key: r.key,
        created_at: iso(now),
      })),
    )
    .execute();
  const acted = rows.filter((r) => r.result.outcome === 'acted').map((r) => r.rule.id);
  if (acted.length)
    await tx.db
      .updateTable('automation_rules')
      .set({ last_run_at: iso(now) })
      .where('id', 'in', acted)
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

/** The enabled rules of a workspace, cached per process under the reaction settings epoch (migration 0053's triggers). */
function cachedRules(db: Db, workspaceId: string): Promise<Rule[]> {
  return cachedReactionSetting(db, `automation-rules:${workspaceId}`, () => enabledRules(db, workspaceId));
}

/** What a batch of runs reads, for all its events at once: a few statements per batch instead of several per event. */
interface Preloaded {
  logged: Set<string>;
  conversations: Map<string, ConversationRow>;
  messages: Map<string, MessageRow>;
  labels: Map<string, string[]>;
  contacts: Map<string, ContactView>;
}

const runKey = (p: RunJobPayload, rule: Rule) => `${p.eventId}:${rule.id}`;

async function rulesOf(db: Db, p: RunJobPayload): Promise<Rule[]> {
  return (await cachedRules(db, p.workspaceId)).filter((r) => r.trigger.type === p.trigger);
}

async function preload(db: Db, runs: readonly { p: RunJobPayload; rules: Rule[] }[]): Promise<Preloaded> {
  const keys = runs.flatMap(({ p, rules }) => rules.map((r) => runKey(p, r)));
  const conversationIds = [...new Set(runs.map(({ p }) => p.conversationId))];
  const messageIds = runs.flatMap(({ p }) => (p.messageId ? [p.messageId] : []));
  const [logged, conversations, messages, labels] = await Promise.all([
    Promise.all(chunks(keys).map((part) => db.selectFrom('automation_runs').select('run_key').where('run_key', 'in', part).execute())),
    conversationsByIds(db, conversationIds),
    messagesByIds(db, messageIds),
    labelsOf(db, conversationIds),
  ]);
  return {
    logged: new Set(logged.flat().map((r) => r.run_key)),
    conversations: new Map(conversations.map((c) => [c.id, c])),
    messages: new Map(messages.map((m) => [m.id, m])),
    labels,
    contacts: await loadContactViews(
      db,
      conversations.map((c) => c.contact_id),
    ),
  };
}

/** The facts a run starts from: from the batch's preloaded rows when it has them, else read now. */
async function startingFacts(db: Db, conversation: ConversationRow, message: MessageRow | undefined, at: Date, pre: Preloaded | undefined): Promise<Facts> {
  if (!pre || !message) return loadFacts(db, conversation, { message, at });
  const contact = pre.contacts.get(conversation.contact_id);
  const ownContact = contact?.contact.workspace_id === conversation.workspace_id ? contact : undefined;
  return factsOf(conversation, pre.labels.get(conversation.id) ?? [], message, ownContact, at);
}

/**
 * The rules of one event, in order, each seeing what the ones before it changed; in the caller's
 * transaction. Answers the run-log rows to write (the caller writes a batch's in one statement).
 * `pre`: rows a batch read before any of its runs changed the conversation.
 */
async function eventRules(tx: Tx, p: RunJobPayload, pre?: Preloaded): Promise<RunRow[]> {
  const rules = await rulesOf(tx.db, p);
  if (rules.length === 0) return [];
  const keys = rules.map((r) => runKey(p, r));
  if (pre ? keys.some((k) => pre.logged.has(k)) : await alreadyRun(tx.db, keys)) return [];
  const conversation = pre ? pre.conversations.get(p.conversationId) : await conversationById(tx.db, p.conversationId);
  if (!conversation || conversation.workspace_id !== p.workspaceId) return [];
  const found = p.messageId ? (pre ? pre.messages.get(p.messageId) : await findMessage(tx.db, conversation.id, p.messageId)) : undefined;
  const message = found?.conversation_id === conversation.id ? found : undefined;
  // History copied by a migration is never acted on.
  if (conversation.imported || message?.imported_at) return [];
  const at = message && (p.trigger === 'customer_message' || p.trigger === 'team_message') ? new Date(message.created_at) : tx.clock.now();
  const shown = message?.direction === 'in' ? message : undefined;
  let facts = await startingFacts(tx.db, conversation, shown, at, pre);
  const log: RunRow[] = [];
  for (const [i, rule] of rules.entries()) {
    const row = { rule, conversationId: conversation.id, trigger: p.trigger, key: keys[i] };
    if (p.depth >= MAX_DEPTH || p.ruleIds.includes(rule.id)) {
      const reason = p.depth >= MAX_DEPTH ? `loop_guard: depth ${MAX_DEPTH} reached` : 'loop_guard: its own change';
      log.push({ ...row, result: { outcome: 'skipped', reason, actions: [] } });
      continue;
    }
    const result = await runRule(tx, rule, facts, p);
    log.push({ ...row, result });
    // The next rule sees what this one changed.
    if (result.outcome === 'acted') facts = await loadFacts(tx.db, result.conversation, { message: shown, at });
  }
  return log;
}

export async function runEventRules(ctx: Pick<Ctx, 'db' | 'clock' | 'hub'>, p: RunJobPayload): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    await logRuns(tx, await eventRules(tx, p));
  });
  announceEvents(ctx);
}

/**
 * Many events' rules in one transaction (under inbound mail), the jobs removed in it. What the runs
 * read is read once for the batch; an event of a conversation an earlier run of the batch changed
 * reads it again. A key logged twice (a job run elsewhere meanwhile) fails the batch, which the job
 * runner then runs one by one.
 */
async function runEventRulesBatch(ctx: Pick<Ctx, 'db' | 'clock' | 'hub'>, payloads: readonly RunJobPayload[], done: (trx: Db) => Promise<void>): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    const runs = [];
    for (const p of payloads) {
      const rules = await rulesOf(trx, p);
      if (rules.length) runs.push({ p, rules });
    }
    const pre = runs.length > 1 ? await preload(trx, runs) : undefined;
    const changed = new Set<string>();
    const log: RunRow[] = [];
    for (const { p } of runs) {
      const rows = await eventRules(tx, p, changed.has(p.conversationId) ? undefined : pre);
      if (rows.some((r) => r.result.outcome === 'acted')) changed.add(p.conversationId);
      log.push(...rows);
    }
    for (const part of chunks(log)) await logRuns(tx, part);
    await done(trx);
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
    const key = `timer:${p.ruleId}:${p.conversationId}:${p.since}`;
    if (await alreadyRun(trx, [key])) return;
    const entry = { rule, conversationId: conversation.id, trigger: rule.trigger.type, key };
    if (!(await stateLasted(trx, rule, conversation, p.since))) {
      await logRuns(tx, [{ ...entry, result: { outcome: 'skipped', reason: 'state_changed', actions: [] } }]);
      return;
    }
    const facts = await loadFacts(trx, conversation, { at: ctx.clock.now() });
    await logRuns(tx, [{ ...entry, result: await runRule(tx, rule, facts, { depth: 0, ruleIds: [] }) }]);
  });
  announceEvents(ctx);
}

export function automationJobs(ctx: Ctx): JobKind[] {
  return [
    {
      kind: RUN_JOB,
      run: (p: RunJobPayload) => runEventRules(ctx, p),
      runBatch: (jobs: { payload: RunJobPayload }[], done) =>
        runEventRulesBatch(
          ctx,
          jobs.map((j) => j.payload),
          done,
        ),
      backoffMs: (n) => (n < 5 ? n * 30_000 : undefined),
    },
    { kind: TIMER_JOB, run: (p: TimerJobPayload) => runTimerRule(ctx, p), backoffMs: (n) => (n < 5 ? n * 30_000 : undefined) },
  ];
}
