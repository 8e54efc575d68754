// Automation's reaction (src/events/registry.ts). Rule actions go through services that record
// events themselves (they import the registry), so a rule cannot run inside the reaction: the
// reaction stores an `automation.run` job in the recording transaction (unique per event), and the
// job runs the rules right after the commit (./engine.ts), idempotently. Time-based triggers store
// an `automation.timer` job for when the state would have lasted long enough; the job checks that
// it did. A workspace without enabled rules costs no statement (the trigger list is cached under the
// reaction settings epoch, migration 0053). Imported and spam conversations are never acted on.
import { reusableQuery } from '../db/reusable-query.js';
import type { Reaction, RecordedEvent } from '../events/reaction-types.js';
import { cachedReactionSetting } from '../events/settings-cache.js';
import { DAY, HOUR, iso, MINUTE } from '../platform/clock.js';
import { enqueue } from '../platform/jobs.js';
import type { Trigger } from './schema.js';

export const RUN_JOB = 'automation.run';
export const TIMER_JOB = 'automation.timer';
export type EventTrigger = 'conversation_created' | 'customer_message' | 'team_message' | 'conversation_updated';

export interface RunJobPayload {
  workspaceId: string;
  conversationId: string;
  eventId: string;
  trigger: EventTrigger;
  /** The message that started it (customer_message, team_message). */
  messageId?: string;
  /** How many rule runs made the change that started this one (0: a person, a customer or the server). */
  depth: number;
  ruleIds: string[];
}

export interface TimerJobPayload {
  workspaceId: string;
  ruleId: string;
  conversationId: string;
  /** When the state began (the job checks that it lasted). */
  since: string;
}

type Shown = { id?: string; imported?: boolean; spam?: boolean; status?: string; assignee_id?: string | null };
type ShownMessage = { id?: string; kind?: string; direction?: string; automatic?: boolean; author?: { type?: string }; created_at?: string };

const enabledTriggers = reusableQuery((db, workspaceId: string) =>
  db.selectFrom('automation_rules').select(['id', 'trigger']).where('workspace_id', '=', workspaceId).where('enabled', '=', 1),
);

async function triggersOf(tx: Parameters<NonNullable<Reaction['onEvent']>>[0], workspaceId: string) {
  return cachedReactionSetting(tx.db, `automation:${workspaceId}`, async () =>
    (await enabledTriggers(tx.db, workspaceId)).map((r) => ({ id: r.id, trigger: JSON.parse(r.trigger) as Trigger })),
  );
}

function eventTrigger(event: RecordedEvent, message: ShownMessage | undefined): EventTrigger | null {
  if (event.type === 'conversation.created') return 'conversation_created';
  if (event.type === 'conversation.updated') return 'conversation_updated';
  if (event.type !== 'message.created' || message?.kind !== 'message') return null;
  if (message.direction === 'in') return 'customer_message';
  const byTeam = message.author?.type === 'member' || message.author?.type === 'api_key';
  return byTeam && !message.automatic ? 'team_message' : null;
}

const TIMER_MS = { pending_for: HOUR, open_unassigned_for: MINUTE, no_customer_answer_for: DAY } as const;

/** Whether this event starts the state a time-based trigger waits on. */
function stateBegins(trigger: Trigger, event: RecordedEvent, c: Shown, kind: EventTrigger): boolean {
  const changes = event.cause.changes ?? {};
  switch (trigger.type) {
    case 'pending_for':
      return (kind === 'conversation_updated' && changes.status?.to === 'pending') || (kind === 'conversation_created' && c.status === 'pending');
    case 'open_unassigned_for': {
      if (c.status !== 'open' || c.assignee_id) return false;
      if (kind === 'conversation_created') return true;
      return kind === 'conversation_updated' && (changes.status !== undefined || (changes.assignee_id !== undefined && changes.assignee_id.to === null));
    }
    case 'no_customer_answer_for':
      return kind === 'team_message';
    default:
      return false;
  }
}

function timerLength(trigger: Trigger): number {
  if (trigger.type === 'pending_for') return trigger.hours * TIMER_MS.pending_for;
  if (trigger.type === 'open_unassigned_for') return trigger.minutes * TIMER_MS.open_unassigned_for;
  if (trigger.type === 'no_customer_answer_for') return trigger.days * TIMER_MS.no_customer_answer_for;
  return 0;
}

export const automationReaction: Reaction = {
  name: 'automation',
  async onEvent(tx, event) {
    if (event.type !== 'message.created' && event.type !== 'conversation.created' && event.type !== 'conversation.updated') return;
    const conversation = event.data.conversation as Shown | undefined;
    if (!conversation?.id || conversation.imported || conversation.spam) return;
    const message = event.data.message as ShownMessage | undefined;
    const kind = eventTrigger(event, message);
    if (!kind) return;
    const rules = await triggersOf(tx, event.workspaceId);
    if (rules.length === 0) return;
    const chain = event.cause.automation;
    if (rules.some((r) => r.trigger.type === kind)) {
      const payload: RunJobPayload = {
        workspaceId: event.workspaceId,
        conversationId: conversation.id,
        eventId: event.id,
        trigger: kind,
        messageId: message?.id,
        depth: chain?.depth ?? 0,
        ruleIds: [...(chain?.ruleIds ?? [])],
      };
      await enqueue(tx.db, tx.clock, { kind: RUN_JOB, payload, uniqueKey: `${RUN_JOB}:${event.id}` });
    }
    const now = tx.clock.now();
    const since = kind === 'team_message' && message?.created_at ? message.created_at : iso(now);
    for (const r of rules) {
      if (!stateBegins(r.trigger, event, conversation, kind)) continue;
      const payload: TimerJobPayload = { workspaceId: event.workspaceId, ruleId: r.id, conversationId: conversation.id, since };
      const runAt = new Date(new Date(since).getTime() + timerLength(r.trigger));
      await enqueue(tx.db, tx.clock, { kind: TIMER_JOB, payload, runAt, uniqueKey: `${TIMER_JOB}:${r.id}:${conversation.id}:${since}` });
    }
  },
};
