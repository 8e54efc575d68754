// Settings › Workspace: the strings in English. tr.ts has the same keys (test/panel/strings.test.ts checks it).
export const workspaceSettingsEn = {
  'settings.not_allowed': 'Only owners and admins can change this.',
  'workspace.retention': 'Delete closed conversations after (days)',
  'workspace.retention_hint':
    'Leave empty to keep everything. Closed conversations unchanged for this many days are deleted with their files, and original e-mails older than this are removed (the messages stay).',
  'workspace.delete': 'Delete workspace',
  'workspace.delete_lead':
    'Deleting {name} stops it at once: members lose access, mail to its addresses is refused, webhooks stop. Every conversation, contact, file, inbox and channel is then deleted. This cannot be undone.',
  'workspace.delete_confirm': 'Type the workspace name, {name}, to confirm',
  'workspace.deleted': 'The workspace is being deleted.',
} as const;

declare module '../../../i18n' {
  interface Messages extends Record<keyof typeof workspaceSettingsEn, string> {}
}
