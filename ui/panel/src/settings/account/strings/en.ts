// Settings › My account: the strings in English. tr.ts has the same keys (test/panel/strings.test.ts checks it).
export const accountEn = {
  'account.email': 'E-mail',
  'account.delete': 'Delete my account',
  'account.delete_lead': 'Your account, sessions and passkeys are deleted. Messages you wrote stay in their conversations without your name.',
  'account.delete_confirm': 'Type your e-mail address, {email}, to confirm',
  'account.only_owner': 'You are the only owner of a workspace: make someone else an owner or delete the workspace first.',
  'account.profile': 'Name and language',
  'account.name': 'Name',
  'account.name_hint': 'Your team sees it, and customers see it on your chat replies.',
  'account.name_invalid': 'A name is 1 to 100 characters.',
  'account.locale': 'Language of the panel',
  'passkeys.title': 'Passkeys',
  'passkeys.lead': 'Sign in with your device’s screen lock or a security key instead of a code.',
  'passkeys.add': 'Add a passkey',
  'passkeys.added': 'Passkey added',
  'passkeys.none': 'No passkeys yet.',
  'passkeys.unnamed': 'Passkey',
  'passkeys.synced': 'synced across devices',
  'passkeys.created': 'Added {when}',
  'passkeys.used': 'last used {when}',
  'passkeys.rename': 'Rename',
  'passkeys.name': 'Name of this passkey',
  'passkeys.delete': 'Remove',
  'passkeys.delete_lead': 'Remove {name}? It can no longer sign you in.',
  'sessions.title': 'Where you are signed in',
  'sessions.current': 'this browser',
  'sessions.unknown': 'Unknown browser',
  'sessions.end': 'Sign out',
  'sessions.end_all': 'Sign out everywhere',
  'sessions.used': 'last used {when}',
} as const;

declare module '../../../i18n' {
  interface Messages extends Record<keyof typeof accountEn, string> {}
}
