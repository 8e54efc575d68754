// The timeline line of a snooze change (details.changes.snoozed_until): "Snoozed until Mon 09:00",
// "Woke up: the customer answered". conversations/event-line.ts adds who did it.
import { locale, t } from '../i18n';
import { wakeText } from './choices';

export function snoozeEventText(change: { from: unknown; to: unknown }, reason: string | undefined): string {
  if (change.to === 'customer_reply') return t('snooze.event_reply');
  if (typeof change.to === 'string') return t('snooze.event_until', { when: wakeText(change.to, locale.value) });
  if (reason === 'customer_reply') return t('snooze.event_woke_reply');
  if (reason === 'snooze_ended') return t('snooze.event_woke_time');
  return t('snooze.event_cleared');
}
