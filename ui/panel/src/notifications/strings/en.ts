// Notifications: the strings in English. tr.ts has the same keys (test/panel/strings.test.ts checks it).
export const notificationsEn = {
  'notif.bell': 'Notifications',
  'notif.unread': 'unread',
  'notif.none': 'Nothing new yet.',
  'notif.title': 'Notifications',
  'notif.lead': 'Choose what reaches you, and how. E-mail comes only after you have had no panel open for 5 minutes, at most one mail every 10 minutes.',
  'notif.trigger': 'When',
  'notif.trigger.new_conversation': 'A new conversation in my inboxes',
  'notif.trigger.assigned': 'A conversation is assigned to me',
  'notif.trigger.customer_reply': 'A customer replies in a conversation assigned to me',
  'notif.trigger.snooze_ended': 'A snoozed conversation assigned to me wakes up',
  'notif.trigger.sla_warning': 'An SLA target of a conversation assigned to me (or unassigned) is nearly due',
  'notif.trigger.sla_breached': 'An SLA target of a conversation assigned to me (or unassigned) is breached',
  'notif.trigger.reply_held': 'A reply I scheduled is kept back because the customer wrote first',
  'notif.trigger.sign_in_required': 'An e-mail channel’s Google or Microsoft sign-in stops working (owners and admins)',
  'notif.trigger.mention': 'Someone mentions me in a note (@name)',
  'notif.channel.realtime': 'In the panel',
  'notif.channel.push': 'Push',
  'notif.channel.email': 'E-mail',
  'notif.push_no_keys':
    'Push is greyed out: this server has no Web Push keys. The operator makes a pair with `svc vapid-keys` and sets SVC_VAPID_PUBLIC_KEY and SVC_VAPID_PRIVATE_KEY.',
  'notif.email_no_smtp': 'E-mail is greyed out: this server has no mail account to send from (SVC_SMTP_HOST is not set).',
  'notif.push_subscribe': 'Get push notifications in this browser',
  'notif.push_on': 'This browser gets push notifications now.',
  'notif.push_off': 'Web Push is off on this server.',
  'notif.push_unsupported': 'This browser cannot receive push notifications.',
  'notif.push_denied': 'Notifications are blocked for this site in the browser.',
  'notif.mark_all_read': 'Mark all as read',
} as const;

declare module '../../i18n' {
  interface Messages extends Record<keyof typeof notificationsEn, string> {}
}
