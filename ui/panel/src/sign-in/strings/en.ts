// Signing in and invites: the strings in English. tr.ts has the same keys (test/panel/strings.test.ts checks it).
export const signInEn = {
  'signin.title': 'Sign in',
  'signin.lead': 'We will mail you a one-time code.',
  'signin.email': 'Work e-mail',
  'signin.send': 'Send code',
  'signin.code': 'Code from the e-mail',
  'signin.code_sent': 'If {email} has an account, a code is on its way. It is valid for a few minutes.',
  'signin.verify': 'Sign in',
  'signin.other_address': 'Use another address',
  'signin.no_mail':
    'This server has no mail account, so it cannot mail sign-in codes. Ask your operator for a sign-in link (svc person sign-in-link --email …).',
  'signin.passkey': 'Sign in with a passkey',
  'signin.or': 'or',
  'signin.link_failed': 'This sign-in link is used, expired or wrong. Ask for a new one.',
  'signin.passkey_cancelled': 'The passkey prompt was closed. Try again, or sign in with a code.',
  'signin.link_title': 'Signing in',
  'invite.offer': 'You are invited to join {workspace} as {role}, with {email}.',
  'invite.lead': 'You were invited to a workspace on svc.',
  'invite.name': 'Your name',
  'invite.accept': 'Accept the invite',
  'invite.sign_in_first': 'This address already has an account. Sign in as that person, then open the link again.',
  'invite.failed': 'This invite cannot be used: {error}',
  'invite.missing': 'The link is incomplete. Open the whole link from the invite e-mail.',
  'signin.link_checking': 'Checking the sign-in link…',
  'signin.link_ask': 'Sign in as {email}?',
  'signin.link_sign_in': 'Sign in as {email}',
  'signin.link_cancel': 'Cancel',
  'signin.link_warning': 'Continue only if you asked for this link. A link you did not ask for may come from someone who wants you to work in their account.',
  'signin.link_switch_lead': 'You are signed in as {current}. This link signs this browser in as {email} instead.',
  'signin.link_switch': 'Switch to {email}',
  'signin.link_stay': 'Stay signed in as {email}',
  'signin.link_already': 'You are already signed in as {email}.',
  'signin.link_continue': 'Continue',
} as const;

declare module '../../i18n' {
  interface Messages extends Record<keyof typeof signInEn, string> {}
}
