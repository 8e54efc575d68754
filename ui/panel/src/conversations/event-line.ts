// The text of a conversation's event line: what changed (the server's details.changes, one
// { from, to } per field), why when the server gives a reason, and who when a person or an API
// key did it.
import type { Message } from '../api';
import { customFieldEventText } from '../custom-fields';
import { t } from '../i18n';
import { mergeEventText } from '../merge';
import { snoozeEventText } from '../snooze';
import { inboxes, me, memberName } from '../state';
import { autoAssignedText, teamEventText, teamUnassignText } from '../teams';

type Change = { from: unknown; to: unknown };
type EventDetails = { changes?: Record<string, Change>; reason?: string };

const PRIORITIES = new Set(['low', 'medium', 'high', 'urgent']);

function priorityName(value: unknown): string {
  return typeof value === 'string' && PRIORITIES.has(value) ? t(`priority.${value as 'low'}`) : t('details.priority_none');
}

function labelsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((l): l is string => typeof l === 'string') : [];
}

function describeChange(m: Message, field: string, change: Change, reason: string | undefined): string[] {
  const moved = mergeEventText(field, change);
  if (moved) return [moved];
  const custom = customFieldEventText(field, change);
  if (custom) return [custom];
  switch (field) {
    case 'snoozed_until':
      return [snoozeEventText(change, reason)];
    case 'status':
      // A snooze that woke says so itself; the status going back to open is part of it.
      if ((reason === 'snooze_ended' || reason === 'customer_reply') && woke(m)) return [];
      if (reason === 'customer_reply' && change.to === 'open') return [t('event.reopened_by_reply')];
      return [t('event.status', { to: t(`status.${change.to as 'open'}`) })];
    case 'assignee_id':
      if (change.to === null) {
        if (reason === 'member_left') return [t('event.unassigned_member_left')];
        if (reason === 'member_removed') return [t('event.unassigned_member_removed')];
        if (teamUnassignText(reason)) return [teamUnassignText(reason)!];
        return [t('event.assignee_cleared')];
      }
      if (m.author.type === 'member' && change.to === m.author.member_id) return [t('event.self_assigned')];
      if (change.to === me.value?.person.id) return [t('event.assigned_to_you')];
      return [t('event.assignee_set', { to: memberName(change.to as string, t('conv.you'), t('conv.team')) })];
    case 'team_id':
      return [teamEventText(change, reason)];
    case 'priority':
      return [change.to === null ? t('event.priority_cleared') : t('event.priority', { to: priorityName(change.to) })];
    case 'subject':
      return [t('event.subject', { to: String(change.to ?? '') })];
    case 'spam':
      return [change.to ? t('event.spam') : t('event.not_spam')];
    case 'contact_id':
      return [reason === 'contact_merged' ? t('event.contacts_merged') : t('event.contact')];
    case 'inbox_id': {
      const inbox = inboxes.value.find((i) => i.id === change.to);
      return [inbox ? t('event.inbox', { to: inbox.name }) : t('event.inbox_other')];
    }
    case 'labels': {
      const before = labelsOf(change.from);
      const after = labelsOf(change.to);
      const added = after.filter((l) => !before.includes(l));
      const removed = before.filter((l) => !after.includes(l));
      const lines: string[] = [];
      if (added.length) lines.push(t('event.labels_added', { labels: added.join(', ') }));
      if (removed.length) lines.push(t('event.labels_removed', { labels: removed.join(', ') }));
      return lines;
    }
    default:
      return [t('event.other', { what: field })];
  }
}

function woke(m: Message): boolean {
  const c = ((m.details ?? {}) as EventDetails).changes?.snoozed_until;
  return !!c && c.to === null;
}

/** Who made the change, when it was a person or an API key (a reason the server gives speaks for itself). */
function describeAuthor(m: Message, reason: string | undefined): string | null {
  if (reason) return null;
  if (m.author.type === 'member') {
    if (m.author.member_id && m.author.member_id === me.value?.person.id) return t('event.by_you');
    return t('event.by', { who: memberName(m.author.member_id, t('conv.you'), t('conv.team')) });
  }
  if (m.author.type === 'api_key') return t('event.by_api');
  return null;
}

/** The parts of an event line before its time: the changes, then who made them. */
export function describeEvent(m: Message): string[] {
  const details = (m.details ?? {}) as EventDetails;
  const changes = Object.entries(details.changes ?? {}).flatMap(([field, change]) => describeChange(m, field, change, details.reason));
  if (changes.length === 0) return [m.body];
  const auto = autoAssignedText(details.reason);
  if (auto) return [changes.join('; '), auto];
  const author = describeAuthor(m, details.reason);
  return author ? [changes.join('; '), author] : [changes.join('; ')];
}
