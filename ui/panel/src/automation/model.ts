// What a rule and a macro are made of (the API's shapes), what each condition field and action needs,
// and the checks the editor runs before it lets the person save.
export type Priority = 'low' | 'medium' | 'high' | 'urgent';
export type Status = 'open' | 'pending' | 'closed';

export type Action =
  | { type: 'assign_member'; member_id: string }
  | { type: 'assign_team'; team_id: string }
  | { type: 'auto_assign' }
  | { type: 'add_label'; label: string }
  | { type: 'remove_label'; label: string }
  | { type: 'set_priority'; priority: Priority | null }
  | { type: 'set_status'; status: Status }
  | { type: 'snooze'; hours: number }
  | { type: 'send_saved_reply'; saved_reply_id: string }
  | { type: 'add_note'; text: string }
  | { type: 'notify_members'; member_ids: string[] }
  | { type: 'mark_spam' }
  | { type: 'send_webhook'; endpoint_id: string }
  | { type: 'set_custom_field'; key: string; value: string | number | boolean | string[] | null };
export type ActionType = Action['type'];

export const ACTION_TYPES: ActionType[] = [
  'assign_member',
  'assign_team',
  'auto_assign',
  'add_label',
  'remove_label',
  'set_priority',
  'set_status',
  'snooze',
  'send_saved_reply',
  'add_note',
  'notify_members',
  'mark_spam',
  'send_webhook',
  'set_custom_field',
];

export const PRIORITIES: Priority[] = ['low', 'medium', 'high', 'urgent'];
export const STATUSES: Status[] = ['open', 'pending', 'closed'];

/** A new action of a type, its fields empty (the editor says what is missing). */
export function blankAction(type: ActionType): Action {
  switch (type) {
    case 'assign_member':
      return { type, member_id: '' };
    case 'assign_team':
      return { type, team_id: '' };
    case 'add_label':
    case 'remove_label':
      return { type, label: '' };
    case 'set_priority':
      return { type, priority: 'high' };
    case 'set_status':
      return { type, status: 'closed' };
    case 'snooze':
      return { type, hours: 24 };
    case 'send_saved_reply':
      return { type, saved_reply_id: '' };
    case 'add_note':
      return { type, text: '' };
    case 'notify_members':
      return { type, member_ids: [] };
    case 'send_webhook':
      return { type, endpoint_id: '' };
    case 'set_custom_field':
      return { type, key: '', value: null };
    default:
      return { type } as Action;
  }
}

/** The action's missing or wrong part, as a string key, or null when it is complete. */
export function actionProblem(
  a: Action,
): 'missing_member' | 'missing_team' | 'missing_label' | 'bad_hours' | 'missing_reply' | 'missing_text' | 'missing_endpoint' | 'missing_key' | null {
  switch (a.type) {
    case 'assign_member':
      return a.member_id ? null : 'missing_member';
    case 'assign_team':
      return a.team_id ? null : 'missing_team';
    case 'add_label':
    case 'remove_label':
      return a.label.trim() ? null : 'missing_label';
    case 'snooze':
      return Number.isInteger(a.hours) && a.hours >= 1 && a.hours <= 8760 ? null : 'bad_hours';
    case 'send_saved_reply':
      return a.saved_reply_id ? null : 'missing_reply';
    case 'add_note':
      return a.text.trim() ? null : 'missing_text';
    case 'notify_members':
      return a.member_ids.length ? null : 'missing_member';
    case 'send_webhook':
      return a.endpoint_id ? null : 'missing_endpoint';
    case 'set_custom_field':
      return a.key ? null : 'missing_key';
    default:
      return null;
  }
}

// ---- Triggers ----

export type Trigger =
  | { type: 'conversation_created' | 'customer_message' | 'team_message' | 'conversation_updated' }
  | { type: 'pending_for'; hours: number }
  | { type: 'open_unassigned_for'; minutes: number }
  | { type: 'no_customer_answer_for'; days: number };
export type TriggerType = Trigger['type'];
export const TRIGGER_TYPES: TriggerType[] = [
  'conversation_created',
  'customer_message',
  'team_message',
  'conversation_updated',
  'pending_for',
  'open_unassigned_for',
  'no_customer_answer_for',
];
/** The number a time-based trigger takes: its field and its bounds. */
export const TRIGGER_AMOUNT: Partial<Record<TriggerType, { field: 'hours' | 'minutes' | 'days'; max: number; initial: number }>> = {
  pending_for: { field: 'hours', max: 8760, initial: 48 },
  open_unassigned_for: { field: 'minutes', max: 43200, initial: 30 },
  no_customer_answer_for: { field: 'days', max: 365, initial: 7 },
};

export function triggerAmount(tr: Trigger): number | null {
  const spec = TRIGGER_AMOUNT[tr.type];
  return spec ? ((tr as Record<string, unknown>)[spec.field] as number) : null;
}

export function makeTrigger(type: TriggerType, amount?: number): Trigger {
  const spec = TRIGGER_AMOUNT[type];
  if (!spec) return { type } as Trigger;
  return { type, [spec.field]: amount ?? spec.initial } as Trigger;
}

// ---- Conditions ----

export type ConditionField =
  | 'inbox_id'
  | 'channel_kind'
  | 'subject'
  | 'body'
  | 'sender_email'
  | 'sender_domain'
  | 'contact_attribute'
  | 'label'
  | 'priority'
  | 'status'
  | 'assignee_id'
  | 'team_id'
  | 'business_hours'
  | 'custom_field';
export type Condition = { field: ConditionField; operator: string; value?: string | null; key?: string };

/** What a value picker offers: a list of ids or fixed words, free text, or nothing. */
export type ValueKind =
  | 'inbox'
  | 'channel_kind'
  | 'text'
  | 'pattern'
  | 'email'
  | 'domain'
  | 'label'
  | 'priority'
  | 'status'
  | 'member'
  | 'team'
  | 'attribute'
  | 'custom_field';

export const FIELDS: Record<ConditionField, { operators: string[]; value: ValueKind; noValue?: string[] }> = {
  inbox_id: { operators: ['is', 'is_not'], value: 'inbox' },
  channel_kind: { operators: ['is', 'is_not'], value: 'channel_kind' },
  subject: { operators: ['contains', 'not_contains', 'matches'], value: 'text' },
  body: { operators: ['contains', 'not_contains', 'matches'], value: 'text' },
  sender_email: { operators: ['is', 'contains', 'ends_with'], value: 'email' },
  sender_domain: { operators: ['is', 'is_not'], value: 'domain' },
  contact_attribute: { operators: ['is', 'contains', 'exists'], value: 'attribute', noValue: ['exists'] },
  label: { operators: ['has', 'has_not'], value: 'label' },
  priority: { operators: ['is', 'is_not'], value: 'priority' },
  status: { operators: ['is', 'is_not'], value: 'status' },
  assignee_id: { operators: ['is', 'is_not', 'unassigned'], value: 'member', noValue: ['unassigned'] },
  team_id: { operators: ['is', 'is_not', 'none'], value: 'team', noValue: ['none'] },
  business_hours: { operators: ['inside', 'outside'], value: 'text', noValue: ['inside', 'outside'] },
  custom_field: { operators: ['is', 'is_not', 'is_set', 'is_empty'], value: 'custom_field', noValue: ['is_set', 'is_empty'] },
};
export const CONDITION_FIELDS = Object.keys(FIELDS) as ConditionField[];
export const CHANNEL_KINDS = ['email', 'chat', 'feedback', 'api'] as const;

export function needsValue(c: Pick<Condition, 'field' | 'operator'>): boolean {
  return !FIELDS[c.field].noValue?.includes(c.operator);
}

export function blankCondition(field: ConditionField): Condition {
  const spec = FIELDS[field];
  const operator = spec.operators[0];
  const value = !needsValue({ field, operator })
    ? null
    : spec.value === 'channel_kind'
      ? 'email'
      : spec.value === 'priority'
        ? 'high'
        : spec.value === 'status'
          ? 'open'
          : '';
  return field === 'contact_attribute' || field === 'custom_field' ? { field, operator, value, key: '' } : { field, operator, value };
}

/** A condition's missing or wrong part, as a string key, or null when it is complete. */
export function conditionProblem(c: Condition): 'missing_key' | 'missing_value' | 'bad_pattern' | null {
  if ((c.field === 'contact_attribute' || c.field === 'custom_field') && !c.key?.trim()) return 'missing_key';
  if (!needsValue(c)) return null;
  if (!c.value?.trim()) return 'missing_value';
  if (c.operator === 'matches') {
    try {
      new RegExp(c.value);
    } catch {
      return 'bad_pattern';
    }
  }
  return null;
}

/** What the API takes for a condition: no value where the operator has none, no key but for attributes. */
export function conditionBody(c: Condition): Condition {
  const out: Condition = { field: c.field, operator: c.operator };
  if (needsValue(c)) out.value = (c.value ?? '').trim();
  if (c.field === 'contact_attribute' || c.field === 'custom_field') out.key = (c.key ?? '').trim();
  return out;
}

export function actionBody(a: Action): Action {
  if (a.type === 'add_label' || a.type === 'remove_label') return { ...a, label: a.label.trim() };
  if (a.type === 'add_note') return { ...a, text: a.text.trim() };
  return a;
}

export type Conditions = { match: 'all' | 'any'; items: Condition[] };

export type Rule = {
  id: string;
  name: string;
  enabled: boolean;
  position: number;
  trigger: Trigger;
  conditions: Conditions;
  actions: Action[];
  created_at: string;
  updated_at: string;
  last_run_at: string | null;
};

export type Macro = { id: string; name: string; shared: boolean; owner_member_id: string | null; actions: Action[]; created_at: string; updated_at: string };
