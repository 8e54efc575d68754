// SLA's reaction (src/events/registry.ts): before a conversation's event is stored, the change it
// reports (a customer's message, the team's reply, a status, snooze or priority change) moves the
// conversation's SLA in the same transaction, and the event shows the SLA as it is now.
// A conversation without SLA state in an inbox without a policy costs one query.
import { conversationById } from '../conversations/store.js';
import type { Reaction } from '../events/reaction-types.js';
import type { SlaInput } from './engine.js';
import { formatSla } from './format.js';
import { moveSla } from './move.js';
import { policyFor } from './policy.js';

type ShownMessage = { kind?: string; direction?: string; automatic?: boolean; created_at?: string; author?: { type?: string } };
type Shown = { id?: string; imported?: boolean; sla?: unknown; inbox_id?: string; priority?: string | null };

function inputOf(type: string, data: Record<string, unknown>, now: Date): SlaInput | undefined {
  if (type === 'conversation.updated') return { kind: 'status', at: now };
  if (type !== 'message.created') return undefined;
  const m = data.message as ShownMessage | undefined;
  if (!m || m.kind !== 'message' || m.automatic) return undefined;
  const at = m.created_at ? new Date(m.created_at) : now;
  if (m.direction === 'in') return { kind: 'customer_message', at };
  if (m.author?.type === 'member' || m.author?.type === 'api_key') return { kind: 'team_reply', at };
  return undefined;
}

export const slaReaction: Reaction = {
  name: 'sla',
  async enrich(tx, event) {
    const shown = event.data.conversation as Shown | undefined;
    if (!shown?.id || shown.imported) return event.data;
    const input = inputOf(event.type, event.data, tx.clock.now());
    if (!input) return event.data;
    if (!shown.sla && !(await policyFor(tx.db, shown.inbox_id ?? '', shown.priority ?? null))) return event.data;
    const row = await conversationById(tx.db, shown.id);
    if (!row) return event.data;
    const moved = await moveSla(tx, row, input);
    if (!moved.changed) return event.data;
    return { ...event.data, conversation: { ...shown, sla: formatSla(moved.state ? JSON.stringify(moved.state) : null) } };
  },
};
