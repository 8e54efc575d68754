// Settings › API keys: the strings in English. tr.ts has the same keys (test/panel/strings.test.ts checks it).
export const apiKeysEn = {
  'keys.lead': 'Keys let your own systems use the /v1 API. Each key holds the scopes you give it and can be limited to inboxes.',
  'keys.name': 'Name',
  'keys.scopes': 'Scopes',
  'keys.scopes_hint': 'None ticked means every scope.',
  'keys.inboxes': 'Limit to inboxes',
  'keys.inboxes_hint': 'None ticked means every inbox.',
  'keys.expires': 'Expires on (optional)',
  'keys.new': 'New API key',
  'keys.created': 'Key {name} created',
  'keys.empty': 'No API keys yet. Create one to connect your backend or scripts.',
  'keys.revoke': 'Revoke',
  'keys.revoke_confirm': 'Revoke {name}? Anything using it stops working at once.',
  'keys.revoked': 'Revoked',
  'keys.last_used': 'Last used',
  'keys.never': 'never',
  'keys.all_scopes': 'all scopes',
  'keys.all_inboxes': 'all inboxes',
} as const;

declare module '../../../i18n' {
  interface Messages extends Record<keyof typeof apiKeysEn, string> {}
}
