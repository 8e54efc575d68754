// What the API, events and webhooks show of a conversation's SLA (the `sla` of a Conversation).
import { z } from '@hono/zod-openapi';
import type { SlaState, TargetState } from './engine.js';

function one(t: TargetState | null) {
  if (!t) return null;
  return {
    started_at: t.started_at,
    target_minutes: t.minutes,
    due_at: t.due_at,
    warn_at: t.warn_at,
    breached_at: t.breached_at,
    met_at: t.met_at,
    paused: t.paused_at !== null,
  };
}

/** null: no SLA applies (no policy when the customer first wrote, or an imported conversation). */
export function formatSla(text: string | null | undefined) {
  if (!text) return null;
  const st = JSON.parse(text) as SlaState;
  return { first_response: one(st.first_response), next_response: one(st.next_response), resolution: one(st.resolution) };
}

const TargetSchema = z
  .object({
    started_at: z.string().openapi({ description: 'when this target’s clock started (the customer’s message; a reopen for resolution)' }),
    target_minutes: z.number().int().openapi({ description: 'the target, in minutes of the inbox’s business hours' }),
    due_at: z.string().nullable().openapi({ description: 'when it falls due; null while paused (resolution while pending or snoozed)' }),
    warn_at: z
      .string()
      .nullable()
      .openapi({ description: 'when 80 % of the target’s business time has passed (the assignee is warned; the panel’s clock turns amber)' }),
    breached_at: z.string().nullable().openapi({ description: 'the due time it passed unmet; null while in time' }),
    met_at: z.string().nullable().openapi({ description: 'when it was met (the reply, the close), in time or late' }),
    paused: z.boolean(),
  })
  .nullable()
  .openapi('SlaTargetState');

export const SlaSchema = z
  .object({ first_response: TargetSchema, next_response: TargetSchema, resolution: TargetSchema })
  .nullable()
  .openapi('ConversationSla', {
    description:
      'the SLA targets of the conversation’s inbox and priority, counted in the inbox’s business hours; next_response runs from each customer message after the first response to the next reply. null when no SLA applies (imported conversations never have one)',
  });
