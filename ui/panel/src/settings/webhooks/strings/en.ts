// Settings › Webhooks: the strings in English. tr.ts has the same keys (test/panel/strings.test.ts checks it).
export const webhooksEn = {
  'webhooks.lead': 'Webhooks send signed events to your backend as they happen.',
  'webhooks.url': 'Endpoint URL',
  'webhooks.url_hint': 'A public http or https address; private and loopback addresses are refused.',
  'webhooks.events': 'Events',
  'webhooks.events_hint': 'None ticked means every event.',
  'webhooks.inbox': 'Only this inbox',
  'webhooks.any_inbox': 'Every inbox',
  'webhooks.include_notes': 'Include notes in message.created',
  'webhooks.new': 'New webhook',
  'webhooks.created': 'Webhook created. Its signing secret:',
  'webhooks.empty': 'No webhooks yet.',
  'webhooks.enabled': 'Enabled',
  'webhooks.disabled': 'Disabled: {reason}',
  'webhooks.enable': 'Enable again',
  'webhooks.rotate': 'Rotate secret',
  'webhooks.rotated': 'New signing secret (the old one keeps signing for 24 hours):',
  'webhooks.delete': 'Delete',
  'webhooks.delete_confirm': 'Delete the webhook to {url}? Nothing more is sent to it.',
  'webhooks.deliveries': 'Recent deliveries',
  'webhooks.no_deliveries': 'Nothing delivered yet.',
  'webhooks.redeliver': 'Send again',
  'webhooks.redelivered': 'Queued to send again',
  'webhooks.event': 'Event',
  'webhooks.result': 'Result',
  'webhooks.answer': 'Answer',
  'webhooks.when': 'When',
  'webhooks.latency': '{ms} ms',
  'webhooks.failing_since': 'Failing since {when}',
} as const;

declare module '../../../i18n' {
  interface Messages extends Record<keyof typeof webhooksEn, string> {}
}
