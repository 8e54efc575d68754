// Snooze: the strings in English. tr.ts has the same keys (test/panel/strings.test.ts checks it).
export const snoozeEn = {
  'snooze.button': 'Snooze',
  'snooze.menu': 'Snooze until',
  'snooze.later_today': 'Later today',
  'snooze.tomorrow': 'Tomorrow',
  'snooze.next_monday': 'Next Monday',
  'snooze.customer_reply': 'Until the customer answers',
  'snooze.pick': 'Choose a time',
  'snooze.pick_apply': 'Snooze',
  'snooze.wake_now': 'Wake up now',
  'snooze.badge_until': 'Snoozed until {when}',
  'snooze.badge_reply': 'Snoozed until the customer answers',
  'snooze.view': 'Snoozed',
  'snooze.empty': 'Nothing snoozed. Snooze a conversation to put it aside until a time or until the customer answers.',
  'snooze.event_until': 'Snoozed until {when}',
  'snooze.event_reply': 'Snoozed until the customer answers',
  'snooze.event_woke_reply': 'Woke up: the customer answered',
  'snooze.event_woke_time': 'Woke up: the snooze time came',
  'snooze.event_cleared': 'Snooze ended',
  'snooze.shortcut': 'Snooze the open conversation',
} as const;

declare module '../../i18n' {
  interface Messages extends Record<keyof typeof snoozeEn, string> {}
}
