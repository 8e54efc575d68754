// What actions do to a conversation, for rules and macros alike. `planActions` decides, without
// writing, which actions would change something (the dry run shows exactly that); `applyActions`
// writes them in the caller's transaction: the data changes through applyConversationChanges (one
// timeline line and one conversation.updated), then notes, notifications, the saved reply (an
// email.send job) and webhooks (an outbox row) — nothing leaves the server before the commit.
import { autoAssign } from '../assignment/pick.js';
import { applyConversationChanges, type ConversationPatch } from '../conversations/changes.js';
import type { ConversationRow } from '../conversations/format.js';
import type { Author } from '../conversations/service.js';
import { fieldsOfObject } from '../custom-fields/store.js';
import { checkValue } from '../custom-fields/values.js';
import type { Db } from '../db/schema.js';
import type { EventCause } from '../events/reaction-types.js';
import type { Clock } from '../platform/clock.js';
import { HOUR } from '../platform/clock.js';
import { findEndpoint } from '../webhooks/service.js';
import { customFieldsOfFacts, type Facts } from './conditions.js';
import type { Action } from './schema.js';
import { addAutomationNote, notifyMembers, type ReplyOrigin, replyAlreadySent, replyProblem, sendRuleReply, sendToEndpoint } from './send.js';

type Tx = { db: Db; clock: Clock };

export interface ActionContext {
  /** The rule running them (once-per-rule replies, the loop guard); absent for macros. */
  rule?: { id: string; name: string };
  /** Who writes: the system for rules, the member (or key) for macros. */
  author: Author;
  /** The member running a macro (saved replies are rendered as written by them). */
  personId?: string | null;
  automation?: EventCause['automation'];
}

export interface Plan {
  /** The actions that would change something, in order. */
  effective: Action[];
  /** Why some did not (for the run log), by action type. */
  held: string[];
}

/**
 * Which actions would change something, given the conversation as the facts show it; each action
 * sees the state the ones before it leave. auto_assign counts where nobody holds the conversation.
 */
export async function planActions(db: Db, facts: Facts, actions: readonly Action[], ac: Pick<ActionContext, 'rule'>): Promise<Plan> {
  const c = { ...facts.conversation };
  let labels = [...facts.labels];
  const effective: Action[] = [];
  const held: string[] = [];
  const lower = (s: string) => s.toLowerCase();
  for (const a of actions) {
    let changes = false;
    switch (a.type) {
      case 'assign_member':
        changes = c.assignee_id !== a.member_id;
        c.assignee_id = a.member_id;
        break;
      case 'assign_team':
        changes = (c.team_id ?? null) !== a.team_id;
        c.team_id = a.team_id;
        break;
      case 'auto_assign':
        changes = c.assignee_id === null;
        break;
      case 'add_label':
        changes = !labels.some((l) => lower(l) === lower(a.label));
        if (changes) labels = [...labels, a.label.trim()];
        break;
      case 'remove_label':
        changes = labels.some((l) => lower(l) === lower(a.label));
        labels = labels.filter((l) => lower(l) !== lower(a.label));
        break;
      case 'set_priority':
        changes = c.priority !== a.priority;
        c.priority = a.priority;
        break;
      case 'set_status':
        changes = c.status !== a.status;
        c.status = a.status;
        break;
      case 'snooze':
        changes = !c.snoozed_at && c.status !== 'closed';
        break;
      case 'mark_spam':
        changes = c.spam !== 1;
        c.spam = 1;
        break;
      case 'set_custom_field': {
        // The field or its options may have changed since the rule was saved.
        const field = (await fieldsOfObject(db, c.workspace_id, 'conversation')).find((f) => f.key === a.key);
        if (!field || (a.value !== null && typeof checkValue(field, a.value) === 'string')) held.push('custom_field_invalid');
        else changes = JSON.stringify((await customFieldsOfFacts(db, facts))[a.key] ?? null) !== JSON.stringify(a.value);
        break;
      }
      case 'add_note':
      case 'notify_members':
        changes = true;
        break;
      case 'send_saved_reply':
        // Automatic mail never gets an automatic answer; a rule's reply goes out once per conversation.
        if (ac.rule && facts.message?.automatic === 1) held.push('automatic_mail');
        else if (ac.rule && (await replyAlreadySent(db, ac.rule.id, c.id))) held.push('already_sent');
        else {
          const problem = await replyProblem(db, facts.conversation, a.saved_reply_id);
          if (problem) held.push(problem);
          else changes = true;
        }
        break;
      case 'send_webhook': {
        const endpoint = await findEndpoint(db, c.workspace_id, a.endpoint_id);
        if (!endpoint || endpoint.disabled_at) held.push('endpoint_unavailable');
        else changes = true;
        break;
      }
    }
    if (changes) effective.push(a);
  }
  return { effective, held };
}

/** Writes the effective actions of a plan; returns those that changed something. */
export async function applyActions(tx: Tx, facts: Facts, plan: Plan, ac: ActionContext): Promise<{ done: Action[]; conversation: ConversationRow }> {
  let conversation = facts.conversation;
  const patch: ConversationPatch = {};
  let labels = [...facts.labels];
  const later: Action[] = [];
  let autoAssignAt = -1;
  for (const [i, a] of plan.effective.entries()) {
    switch (a.type) {
      case 'assign_member':
        patch.assigneeId = a.member_id;
        break;
      case 'assign_team':
        patch.teamId = a.team_id;
        break;
      case 'auto_assign':
        autoAssignAt = i;
        break;
      case 'add_label':
        labels = [...labels, a.label.trim()];
        break;
      case 'remove_label':
        labels = labels.filter((l) => l.toLowerCase() !== a.label.toLowerCase());
        break;
      case 'set_priority':
        patch.priority = a.priority;
        break;
      case 'set_status':
        patch.status = a.status;
        break;
      case 'snooze':
        patch.snoozedUntil = new Date(tx.clock.now().getTime() + a.hours * HOUR);
        break;
      case 'mark_spam':
        patch.spam = true;
        break;
      case 'set_custom_field':
        patch.customFields = { ...patch.customFields, [a.key]: a.value };
        break;
      default:
        later.push(a);
    }
  }
  const done = plan.effective.filter((a) => later.includes(a));
  if (autoAssignAt >= 0 && patch.assigneeId === undefined) {
    const auto = await autoAssign(tx, {
      workspaceId: conversation.workspace_id,
      inboxId: conversation.inbox_id,
      teamId: patch.teamId !== undefined ? patch.teamId : (conversation.team_id ?? null),
    });
    if (auto?.assigneeId) {
      patch.assigneeId = auto.assigneeId;
      if (auto.teamId && patch.teamId === undefined && auto.teamId !== (conversation.team_id ?? null)) patch.teamId = auto.teamId;
    }
  }
  if (labels.join('\n') !== facts.labels.join('\n')) patch.labels = labels;
  if (Object.keys(patch).length) {
    const result = await applyConversationChanges(tx, {
      conversation,
      patch,
      author: ac.author,
      reason: ac.rule ? 'automation' : 'macro',
      automation: ac.automation,
    });
    conversation = result.conversation;
    for (const a of plan.effective) {
      if (later.includes(a)) continue;
      if (a.type === 'auto_assign' && patch.assigneeId === undefined) continue;
      done.push(a);
    }
  }
  const origin: ReplyOrigin = { rule: ac.rule, author: ac.author, personId: ac.personId ?? null };
  for (const a of later) {
    if (a.type === 'add_note') conversation = await addAutomationNote(tx, conversation, a.text, origin);
    if (a.type === 'notify_members') await notifyMembers(tx, conversation, a.member_ids, origin);
    if (a.type === 'send_saved_reply') conversation = await sendRuleReply(tx, conversation, a.saved_reply_id, origin);
    if (a.type === 'send_webhook') await sendToEndpoint(tx, conversation, a.endpoint_id, origin);
  }
  // In the order the actions were given.
  return { done: plan.effective.filter((a) => done.includes(a)), conversation };
}
