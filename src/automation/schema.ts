// The API contract of automation rules, their runs and macros (issue 36): the zod schemas that both
// validate requests and describe answers in the OpenAPI document (the panel's typed client).
// Lengths count UTF-16 units (zod's max), plus a code-point check where people type text.
import { z } from '@hono/zod-openapi';

export const MAX_RULES = 200;
export const MAX_MACROS_PER_OWNER = 200;
export const MAX_CONDITIONS = 30;
export const MAX_ACTIONS = 20;
export const MAX_NAME_CHARS = 100;
export const MAX_VALUE_CHARS = 500;
/** A `matches` pattern: at most this long (see ./pattern.ts for the rest of the safety rules). */
export const MAX_PATTERN_CHARS = 200;
export const MAX_NOTE_CHARS = 10_000;
export const MAX_NOTIFY_MEMBERS = 50;
export const MAX_MACRO_CONVERSATIONS = 100;
export const MAX_TIMER_HOURS = 24 * 365;

export const PRIORITY = z.enum(['low', 'medium', 'high', 'urgent']);
export const STATUS = z.enum(['open', 'pending', 'closed']);
const id = z.string().min(1).max(100);
/** A text of 1 to `max` characters (code points: an emoji counts once). */
const text = (max: number) =>
  z
    .string()
    .max(max * 2)
    .refine((v) => v.trim().length > 0, { message: 'must not be empty' })
    .refine((v) => [...v].length <= max, { message: `at most ${max} characters` })
    .openapi({ maxLength: max });
const value = z.string().max(MAX_VALUE_CHARS);

export const EVENT_TRIGGERS = ['conversation_created', 'customer_message', 'team_message', 'conversation_updated'] as const;
export const TIMER_TRIGGERS = ['pending_for', 'open_unassigned_for', 'no_customer_answer_for'] as const;

export const TriggerSchema = z
  .discriminatedUnion('type', [
    z.object({ type: z.enum(EVENT_TRIGGERS) }).strict(),
    z.object({ type: z.literal('pending_for'), hours: z.number().int().min(1).max(MAX_TIMER_HOURS) }).strict(),
    z
      .object({
        type: z.literal('open_unassigned_for'),
        minutes: z
          .number()
          .int()
          .min(1)
          .max(60 * 24 * 30),
      })
      .strict(),
    z.object({ type: z.literal('no_customer_answer_for'), days: z.number().int().min(1).max(365) }).strict(),
  ])
  .openapi('AutomationTrigger', {
    description:
      'what starts the rule: an event (conversation_created, customer_message, team_message, conversation_updated) or a time in a state (pending_for hours, open_unassigned_for minutes, no_customer_answer_for days)',
  });
export type Trigger = z.infer<typeof TriggerSchema>;

const textOps = z.enum(['contains', 'not_contains', 'matches']);
export const ConditionSchema = z
  .discriminatedUnion('field', [
    z.object({ field: z.literal('inbox_id'), operator: z.enum(['is', 'is_not']), value: id }).strict(),
    z.object({ field: z.literal('channel_kind'), operator: z.enum(['is', 'is_not']), value: z.enum(['email', 'chat', 'feedback', 'api']) }).strict(),
    z.object({ field: z.literal('subject'), operator: textOps, value }).strict(),
    z.object({ field: z.literal('body'), operator: textOps, value }).strict(),
    z.object({ field: z.literal('sender_email'), operator: z.enum(['is', 'contains', 'ends_with']), value }).strict(),
    z.object({ field: z.literal('sender_domain'), operator: z.enum(['is', 'is_not']), value }).strict(),
    z
      .object({
        field: z.literal('contact_attribute'),
        key: z.string().min(1).max(100),
        operator: z.enum(['is', 'contains', 'exists']),
        value: value.optional(),
      })
      .strict(),
    z.object({ field: z.literal('label'), operator: z.enum(['has', 'has_not']), value: z.string().min(1).max(100) }).strict(),
    z.object({ field: z.literal('priority'), operator: z.enum(['is', 'is_not']), value: PRIORITY.nullable() }).strict(),
    z.object({ field: z.literal('status'), operator: z.enum(['is', 'is_not']), value: STATUS }).strict(),
    z.object({ field: z.literal('assignee_id'), operator: z.enum(['is', 'is_not', 'unassigned']), value: id.optional() }).strict(),
    z.object({ field: z.literal('team_id'), operator: z.enum(['is', 'is_not', 'none']), value: id.optional() }).strict(),
    z.object({ field: z.literal('business_hours'), operator: z.enum(['inside', 'outside']), value: z.null().optional() }).strict(),
    z
      .object({
        field: z.literal('custom_field'),
        key: z.string().min(1).max(100),
        operator: z.enum(['is', 'is_not', 'is_set', 'is_empty']),
        value: z.union([value, z.number(), z.boolean()]).optional(),
      })
      .strict(),
  ])
  .openapi('AutomationCondition', {
    description:
      'one test of the conversation. Text tests ignore case; `matches` takes a regular expression of at most 200 characters without back-references, look-arounds or repeated groups (checked when saved). business_hours uses the inbox’s hours. custom_field names a conversation custom field by key (a multi-select `is` one of its options).',
  });
export type Condition = z.infer<typeof ConditionSchema>;

export const ActionSchema = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('assign_member'), member_id: id }).strict(),
    z.object({ type: z.literal('assign_team'), team_id: id }).strict(),
    z.object({ type: z.literal('auto_assign') }).strict(),
    z.object({ type: z.literal('add_label'), label: z.string().min(1).max(100) }).strict(),
    z.object({ type: z.literal('remove_label'), label: z.string().min(1).max(100) }).strict(),
    z.object({ type: z.literal('set_priority'), priority: PRIORITY.nullable() }).strict(),
    z.object({ type: z.literal('set_status'), status: STATUS }).strict(),
    z
      .object({
        type: z.literal('snooze'),
        hours: z
          .number()
          .int()
          .min(1)
          .max(24 * 366),
      })
      .strict(),
    z.object({ type: z.literal('send_saved_reply'), saved_reply_id: id }).strict(),
    z.object({ type: z.literal('add_note'), text: text(MAX_NOTE_CHARS) }).strict(),
    z.object({ type: z.literal('notify_members'), member_ids: z.array(id).min(1).max(MAX_NOTIFY_MEMBERS) }).strict(),
    z.object({ type: z.literal('mark_spam') }).strict(),
    z
      .object({
        type: z.literal('set_custom_field'),
        key: z.string().min(1).max(100),
        value: z.union([value, z.number(), z.boolean(), z.array(value).max(100)]).nullable(),
      })
      .strict(),
    z.object({ type: z.literal('send_webhook'), endpoint_id: id }).strict(),
  ])
  .openapi('AutomationAction', { description: 'one thing a rule or macro does to a conversation; actions run in their order' });
export type Action = z.infer<typeof ActionSchema>;

export const ConditionsSchema = z
  .object({ match: z.enum(['all', 'any']), items: z.array(ConditionSchema).max(MAX_CONDITIONS) })
  .strict()
  .openapi('AutomationConditions', { description: 'all or any of the items must hold; no items: every conversation' });

export const RuleSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    enabled: z.boolean(),
    position: z.number().int().openapi({ description: '0-based place in the order rules run in' }),
    trigger: TriggerSchema,
    conditions: ConditionsSchema,
    actions: z.array(ActionSchema),
    created_at: z.string(),
    updated_at: z.string(),
    last_run_at: z.string().nullable().openapi({ description: 'when it last acted on a conversation' }),
  })
  .openapi('AutomationRule');

export const RuleBody = z
  .object({
    name: text(MAX_NAME_CHARS),
    enabled: z.boolean().optional().openapi({ description: 'default false: try it with a dry run first' }),
    trigger: TriggerSchema,
    conditions: ConditionsSchema.optional().openapi({ description: 'default: all of none (every conversation)' }),
    actions: z.array(ActionSchema).min(1).max(MAX_ACTIONS),
    position: z.number().int().min(0).optional().openapi({ description: 'default: last' }),
  })
  .strict();

export const RulePatch = RuleBody.partial().strict();

export const DryRunBody = z
  .object({
    days: z.number().int().min(1).max(90).optional().openapi({ description: 'conversations created in the last N days (default 30)' }),
    limit_examples: z.number().int().min(0).max(50).optional().openapi({ description: 'default 10' }),
  })
  .strict();

export const DryRunSchema = z
  .object({
    evaluated: z.number().int().openapi({ description: 'conversations looked at' }),
    matched: z.number().int().openapi({ description: 'conversations the rule would have acted on' }),
    summary: z
      .array(z.object({ action: ActionSchema, count: z.number().int() }))
      .openapi({ description: 'per action, on how many conversations it would have done something' }),
    examples: z.array(z.object({ conversation_id: z.string(), subject: z.string().nullable(), actions: z.array(ActionSchema) })),
  })
  .openapi('AutomationDryRun');

export const RUN_OUTCOMES = ['acted', 'no_match', 'skipped'] as const;
export const RunSchema = z
  .object({
    id: z.string(),
    rule_id: z.string(),
    rule_name: z.string(),
    conversation_id: z.string(),
    trigger: z.string().openapi({ description: 'the trigger type that ran the rule' }),
    outcome: z.enum(RUN_OUTCOMES),
    reason: z
      .string()
      .nullable()
      .openapi({ description: 'why it did nothing or was skipped (conditions_not_met, loop_guard, already_sent, state_changed, …)' }),
    actions: z.array(ActionSchema).openapi({ description: 'the actions that changed something' }),
    created_at: z.string(),
  })
  .openapi('AutomationRun');

export const RunsQuery = z.object({
  rule_id: z.string().max(100).optional(),
  conversation_id: z.string().max(100).optional(),
  limit: z.coerce.number().int().min(1).max(200).optional().openapi({ description: 'page size, 1 to 200 (default 50)' }),
  cursor: z.string().max(500).optional().openapi({ description: 'next_cursor of the previous page' }),
});

export const MacroSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    shared: z.boolean().openapi({ description: 'shared: every member sees and runs it (owners and admins manage it); personal: only its owner' }),
    owner_member_id: z.string().nullable(),
    actions: z.array(ActionSchema),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Macro');

export const MacroBody = z
  .object({
    name: text(MAX_NAME_CHARS),
    shared: z.boolean().optional().openapi({ description: 'default false (personal)' }),
    actions: z.array(ActionSchema).min(1).max(MAX_ACTIONS),
  })
  .strict();
export const MacroPatch = MacroBody.partial().strict();

export const MacroRunBody = z.object({ conversation_ids: z.array(id).min(1).max(MAX_MACRO_CONVERSATIONS) }).strict();
export const MacroRunSchema = z
  .object({
    results: z.array(z.object({ conversation_id: z.string(), ok: z.boolean(), error: z.object({ code: z.string(), message: z.string() }).optional() })),
  })
  .openapi('MacroRun');
