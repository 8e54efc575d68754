// A saved view's filter as the dialog's rows of conditions (issue 37), and back: every condition the
// API's ViewFilter takes has a row kind; a filter read from a view becomes rows and the rows give the
// same filter again, so conditions set through the API are shown and kept. Also the plain-words
// summary of a filter ("Status is Open · Label is one of billing").
import { customFields } from '../custom-fields';
import { calendarDay, type MessageKey, t } from '../i18n';
import { inboxes, members } from '../state';
import { teams } from '../teams';
import type { ViewFilter } from './saved-views';

export const KINDS = [
  'status',
  'inbox',
  'channel',
  'assignee',
  'team',
  'label',
  'priority',
  'snoozed',
  'sla',
  'imported',
  'spam',
  'created',
  'last_activity',
  'contact_attribute',
  'custom_field',
  'text',
] as const;
export type Kind = (typeof KINDS)[number];
export const LABEL_MODES = ['any', 'all', 'none'] as const;
export type LabelMode = (typeof LABEL_MODES)[number];
export const ATTRIBUTE_OPS = ['eq', 'neq', 'contains', 'exists', 'absent'] as const;
export const MAX_FIELD_CONDITIONS = 20;
const STATUSES = ['open', 'pending', 'closed'];
const CHANNELS = ['email', 'chat', 'feedback', 'api'];
const PRIORITIES = ['urgent', 'high', 'medium', 'low', 'none'];

/**
 * One condition. `values`: the chosen ones of a multiple choice (status, inbox, …); `text`: a label
 * list (comma-separated), the text, a yes/no ('true'/'false'), the SLA state or a value; `key` and
 * `op`: a contact attribute's or a custom field's; `after`/`before`: a range as the API has it
 * (ISO times), so a bound set through the API survives unless it is edited.
 */
export type Row = { kind: Kind; values: string[]; text: string; mode: LabelMode; key: string; op: string; after: string; before: string };

export function blankRow(kind: Kind): Row {
  const text = kind === 'snoozed' || kind === 'spam' ? 'true' : kind === 'imported' ? 'true' : kind === 'sla' ? 'breached' : '';
  return { kind, values: kind === 'status' ? ['open'] : [], text, mode: 'any', key: '', op: 'eq', after: '', before: '' };
}

/** The kinds a new row (or the row at `at`) may take: one row per condition, except labels (one per mode) and custom fields. */
export function kindsFree(rows: Row[], at = -1): Kind[] {
  return KINDS.filter((k) => {
    if (k === 'custom_field') return rows.filter((r, i) => i !== at && r.kind === k).length < MAX_FIELD_CONDITIONS;
    if (k === 'label') return rows.filter((r, i) => i !== at && r.kind === k).length < LABEL_MODES.length;
    return !rows.some((r, i) => i !== at && r.kind === k);
  });
}

/** A label row's free mode (when a second label row is added). */
export function freeLabelMode(rows: Row[], at = -1): LabelMode {
  return LABEL_MODES.find((m) => !rows.some((r, i) => i !== at && r.kind === 'label' && r.mode === m)) ?? 'any';
}

export function rowsOf(f: ViewFilter): Row[] {
  const rows: Row[] = [];
  const add = (kind: Kind, patch: Partial<Row>) => rows.push({ ...blankRow(kind), ...patch });
  if (f.status?.length) add('status', { values: [...f.status] });
  if (f.inbox_id?.length) add('inbox', { values: [...f.inbox_id] });
  if (f.channel_kind?.length) add('channel', { values: [...f.channel_kind] });
  if (f.assignee_id?.length) add('assignee', { values: [...f.assignee_id] });
  if (f.team_id?.length) add('team', { values: [...f.team_id] });
  for (const mode of LABEL_MODES) {
    const list = f.label?.[mode];
    if (list?.length) add('label', { mode, text: list.join(', ') });
  }
  if (f.priority?.length) add('priority', { values: [...f.priority] });
  if (f.snoozed !== undefined) add('snoozed', { text: String(f.snoozed) });
  if (f.sla) add('sla', { text: f.sla });
  if (f.imported !== undefined) add('imported', { text: String(f.imported) });
  if (f.spam !== undefined) add('spam', { text: String(f.spam) });
  if (f.created?.after || f.created?.before) add('created', { after: f.created.after ?? '', before: f.created.before ?? '' });
  if (f.last_activity?.after || f.last_activity?.before) add('last_activity', { after: f.last_activity.after ?? '', before: f.last_activity.before ?? '' });
  if (f.contact_attribute) add('contact_attribute', { key: f.contact_attribute.key, op: f.contact_attribute.op, text: f.contact_attribute.value ?? '' });
  for (const c of f.custom_fields ?? []) add('custom_field', { key: c.key, text: c.value });
  if (f.text) add('text', { text: f.text });
  return rows;
}

export const needsAttributeValue = (op: string) => op === 'eq' || op === 'neq' || op === 'contains';
const splitLabels = (text: string) =>
  text
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

/** The rows as the API's filter; an unfinished row gives its number (1-based) instead. */
export function filterOfRows(rows: Row[]): { filter: ViewFilter } | { incomplete: number } {
  const f: ViewFilter = {};
  for (const [i, r] of rows.entries()) {
    const incomplete = { incomplete: i + 1 };
    switch (r.kind) {
      case 'status':
      case 'inbox':
      case 'channel':
      case 'assignee':
      case 'team':
      case 'priority': {
        if (!r.values.length) return incomplete;
        const key = ({ status: 'status', inbox: 'inbox_id', channel: 'channel_kind', assignee: 'assignee_id', team: 'team_id', priority: 'priority' } as const)[
          r.kind
        ];
        (f as Record<string, unknown>)[key] = [...r.values];
        break;
      }
      case 'label': {
        const list = splitLabels(r.text);
        if (!list.length) return incomplete;
        f.label = { ...f.label, [r.mode]: list };
        break;
      }
      case 'snoozed':
      case 'imported':
      case 'spam':
        f[r.kind] = r.text === 'true';
        break;
      case 'sla':
        f.sla = r.text as ViewFilter['sla'];
        break;
      case 'created':
      case 'last_activity':
        if (!r.after && !r.before) return incomplete;
        f[r.kind] = { ...(r.after ? { after: r.after } : {}), ...(r.before ? { before: r.before } : {}) };
        break;
      case 'contact_attribute':
        if (!r.key.trim() || (needsAttributeValue(r.op) && r.text === '')) return incomplete;
        f.contact_attribute = { key: r.key.trim(), op: r.op as 'eq', ...(needsAttributeValue(r.op) ? { value: r.text } : {}) };
        break;
      case 'custom_field':
        if (!r.key || r.text === '') return incomplete;
        f.custom_fields = [...(f.custom_fields ?? []), { key: r.key, value: r.text }];
        break;
      case 'text':
        if (!r.text.trim()) return incomplete;
        f.text = r.text.trim();
        break;
    }
  }
  return { filter: f };
}

// Ranges: the dialog shows days (the browser's own calendar); "from" is the day's start, "to" takes
// in the whole day (the API's `before` is the next day's start). An ISO time set through the API is
// shown as its day and sent back unchanged unless the day is edited.
const pad = (n: number) => String(n).padStart(2, '0');
const localDay = (d: Date) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
export const dayOfAfter = (iso: string) => (iso ? localDay(new Date(iso)) : '');
export const dayOfBefore = (iso: string) => (iso ? localDay(new Date(new Date(iso).getTime() - 1)) : '');
export function afterOfDay(day: string): string {
  if (!day) return '';
  const [y, m, d] = day.split('-').map(Number);
  return new Date(y, m - 1, d).toISOString();
}
export function beforeOfDay(day: string): string {
  if (!day) return '';
  const [y, m, d] = day.split('-').map(Number);
  return new Date(y, m - 1, d + 1).toISOString();
}

/** A value of a multiple choice in words: a status, an inbox's or a person's name, "Me", … */
export function choiceName(kind: Kind, id: string): string {
  switch (kind) {
    case 'status':
      return t(`status.${id}` as MessageKey);
    case 'channel':
      return t(`source.${id}` as MessageKey);
    case 'priority':
      return t(`sv.priority_${id}` as MessageKey);
    case 'inbox':
      return inboxes.value.find((i) => i.id === id)?.name ?? t('sv.unknown', { id });
    case 'assignee':
      if (id === 'me') return t('sv.assignee_me');
      if (id === 'none') return t('nav.unassigned');
      return members.value.find((m) => m.person_id === id)?.name ?? members.value.find((m) => m.person_id === id)?.email ?? t('sv.unknown', { id });
    case 'team':
      if (id === 'mine') return t('sv.team_mine');
      if (id === 'none') return t('sv.team_none');
      return teams.value.find((x) => x.id === id)?.name ?? t('sv.unknown', { id });
    default:
      return id;
  }
}

/** The choices a multiple-choice row offers, with any value the view already has (a person who left). */
export function choicesOf(kind: Kind, chosen: string[]): string[] {
  const base =
    kind === 'status'
      ? STATUSES
      : kind === 'channel'
        ? CHANNELS
        : kind === 'priority'
          ? PRIORITIES
          : kind === 'inbox'
            ? inboxes.value.map((i) => i.id)
            : kind === 'assignee'
              ? ['me', 'none', ...members.value.map((m) => m.person_id)]
              : kind === 'team'
                ? ['mine', 'none', ...teams.value.map((x) => x.id)]
                : [];
  return [...base, ...chosen.filter((c) => !base.includes(c))];
}

export const isChoice = (kind: Kind) => ['status', 'inbox', 'channel', 'assignee', 'team', 'priority'].includes(kind);

const or = (list: string[]) => list.join(t('sv.or_sep'));
const fieldLabel = (key: string) => customFields.value.find((f) => f.object === 'conversation' && f.key === key)?.label ?? key;
function fieldValue(key: string, value: string): string {
  const field = customFields.value.find((f) => f.object === 'conversation' && f.key === key);
  if (field?.type === 'checkbox') return value === 'true' ? t('sv.yes') : t('sv.no');
  if (field?.type === 'date' && /^\d{4}-\d{2}-\d{2}$/.test(value)) return calendarDay(value);
  return value;
}

/** One row in words, e.g. "Status is Open or Pending". */
export function describeRow(r: Row): string {
  const name = t(`sv.kind_${r.kind}` as MessageKey);
  if (isChoice(r.kind)) return t('sv.is', { name, value: or(r.values.map((v) => choiceName(r.kind, v))) });
  switch (r.kind) {
    case 'label':
      return t(`sv.label_is_${r.mode}` as MessageKey, { value: splitLabels(r.text).join(', ') });
    case 'snoozed':
    case 'imported':
    case 'spam':
      return t(`sv.${r.kind}_${r.text === 'true' ? 'yes' : 'no'}` as MessageKey);
    case 'sla':
      return t('sv.is', { name, value: t(`sv.sla_${r.text}` as MessageKey) });
    case 'created':
    case 'last_activity': {
      const from = r.after ? calendarDay(dayOfAfter(r.after)) : '';
      const to = r.before ? calendarDay(dayOfBefore(r.before)) : '';
      return from && to ? t('sv.range_both', { name, from, to }) : from ? t('sv.range_from', { name, from }) : t('sv.range_to', { name, to });
    }
    case 'contact_attribute':
      return t(`sv.attr_${r.op}` as MessageKey, { key: r.key, value: r.text });
    case 'custom_field':
      return t('sv.is', { name: fieldLabel(r.key), value: fieldValue(r.key, r.text) });
    case 'text':
      return t('sv.text_has', { value: r.text });
  }
  return name;
}

/** A filter in words, one part per condition; none: every conversation. */
export function describeFilter(f: ViewFilter): string[] {
  return rowsOf(f).map(describeRow);
}
