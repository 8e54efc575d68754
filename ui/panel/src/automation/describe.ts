// Rules, actions and results in plain words: "assign to Support", "add label ‘billing’ ×37".
import { locale, type MessageKey, t } from '../i18n';
import { conversationFields } from './CustomFieldInputs';
import type { Action, Trigger } from './model';
import { endpoints, memberOptions, nameOf, savedReplies, teamOptions } from './options';

/** A word that is a heading elsewhere ("Urgent") inside a sentence. */
const lower = (word: string) => word.toLocaleLowerCase(locale.value);

export function describeAction(a: Action): string {
  const gone = t('actd.unknown');
  switch (a.type) {
    case 'assign_member':
      return t('actd.assign_member', { name: nameOf(memberOptions(), a.member_id, gone) });
    case 'assign_team':
      return t('actd.assign_team', { name: nameOf(teamOptions(), a.team_id, gone) });
    case 'add_label':
    case 'remove_label':
      return t(`actd.${a.type}`, { label: a.label });
    case 'set_priority':
      return t('actd.set_priority', { priority: lower(a.priority ? t(`priority.${a.priority}` as MessageKey) : t('details.priority_none')) });
    case 'set_status':
      return t('actd.set_status', { status: lower(t(`status.${a.status}` as MessageKey)) });
    case 'snooze':
      return t('actd.snooze', { hours: a.hours });
    case 'send_saved_reply':
      return t('actd.send_saved_reply', { name: nameOf(savedReplies.value, a.saved_reply_id, gone) });
    case 'notify_members':
      return t('actd.notify_members', { names: a.member_ids.map((id) => nameOf(memberOptions(), id, gone)).join(', ') });
    case 'send_webhook':
      return t('actd.send_webhook', { name: nameOf(endpoints.value, a.endpoint_id, gone) });
    case 'set_custom_field': {
      const field = conversationFields().find((f) => f.key === a.key)?.label ?? a.key;
      const value = Array.isArray(a.value) ? a.value.join(', ') : a.value;
      return value === null || value === '' ? t('actd.clear_custom_field', { field }) : t('actd.set_custom_field', { field, value: `‘${value}’` });
    }
    default: {
      const key = `actd.${(a as { type: string }).type}` as MessageKey;
      return t(key) ?? (a as { type: string }).type;
    }
  }
}

/** An action as the API may report it in a run or a dry run: the action object, or only its type. */
export function describeReported(a: unknown): string {
  if (typeof a === 'string') return t(`actd.${a}` as MessageKey) ?? a;
  if (a && typeof a === 'object' && 'type' in a) return describeAction(a as Action);
  return String(a);
}

export function describeActions(list: unknown[]): string {
  return list.map(describeReported).join(', ');
}

export function describeTrigger(tr: Trigger): string {
  switch (tr.type) {
    case 'pending_for':
      return t('trigd.pending_for', { n: tr.hours });
    case 'open_unassigned_for':
      return t('trigd.open_unassigned_for', { n: tr.minutes });
    case 'no_customer_answer_for':
      return t('trigd.no_customer_answer_for', { n: tr.days });
    default:
      return t(`trig.${tr.type}`);
  }
}

/** "assign to Support ×30, add label ‘billing’ ×37" from a dry run's summary. */
export function describeSummary(summary: { action: unknown; count: number }[]): string {
  return summary.map((s) => t('dry.times', { action: describeReported(s.action), count: s.count })).join(', ');
}
