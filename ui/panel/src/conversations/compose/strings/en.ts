// Forward and new conversations (issue 33): the strings in English. tr.ts has the same keys.
export const composeEn = {
  'compose.forward': 'Forward',
  'compose.forward_title': 'Forward: {subject}',
  'compose.forward_label': 'Forward this message',
  'compose.forward_note': 'Note above the forwarded message',
  'compose.include_attachments': 'Include the attachments ({count})',
  'compose.forward_send': 'Forward',
  'compose.forwarded': 'Forwarded',
  'compose.forwarded_line': 'Forwarded by {author} to {to}',
  'compose.forward_hint': 'The recipients do not become participants; their answers come back into this conversation.',
  'compose.new': 'New conversation',
  'compose.new_shortcut': 'New conversation',
  'compose.new_title': 'New conversation',
  'compose.inbox': 'Inbox',
  'compose.no_mail_inbox': 'No inbox has an e-mail channel yet. Add one in Settings → Inboxes.',
  'compose.subject': 'Subject',
  'compose.message': 'Message',
  'compose.send': 'Send',
  'compose.sending': 'Sending…',
  'compose.cancel': 'Cancel',
  'compose.to_required': 'Name at least one recipient in To.',
  'compose.write_to': 'Write to {name}',
  'compose.sent': 'Sent',
} as const;

declare module '../../../i18n' {
  interface Messages extends Record<keyof typeof composeEn, string> {}
}
