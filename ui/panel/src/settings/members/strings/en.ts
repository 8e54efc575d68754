// Settings › Members: the strings in English. tr.ts has the same keys (test/panel/strings.test.ts checks it).
export const membersEn = {
  'members.lead': 'Owners and admins manage members. Agents answer conversations and manage contacts.',
  'members.role': 'Role',
  'role.owner': 'Owner',
  'role.admin': 'Admin',
  'role.agent': 'Agent',
  'members.last_seen': 'Last seen {when}',
  'members.never_seen': 'Not seen yet',
  'members.remove': 'Remove',
  'members.leave': 'Leave workspace',
  'members.remove_lead': 'Remove {name}? They lose access at once and their open conversations become unassigned.',
  'members.leave_lead': 'Leave {workspace}? You lose access at once.',
  'members.inboxes': 'Inboxes this agent sees',
  'members.inboxes_hint': 'Leave “Every inbox” ticked, or choose the inboxes whose conversations this agent may see and answer.',
  'members.no_inboxes': 'no inbox',
  'members.all_inboxes': 'Every inbox',
  'invites.title': 'Invite someone',
  'invites.email': 'E-mail address',
  'invites.send': 'Send invite',
  'invites.link': 'Invite link for {email}',
  'invites.mail_sent': 'The invite was mailed. You can also pass the link on yourself:',
  'invites.mail_not_sent': 'The server could not mail it: pass this link on yourself.',
  'invites.pending': 'Pending invites',
  'invites.expires': 'expires {when}',
  'invites.revoke': 'Revoke',
  'invites.resend': 'Send again',
} as const;

declare module '../../../i18n' {
  interface Messages extends Record<keyof typeof membersEn, string> {}
}
