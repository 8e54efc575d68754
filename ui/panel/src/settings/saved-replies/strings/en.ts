// Settings › Saved replies: the strings in English. tr.ts has the same keys (test/panel/strings.test.ts checks it).
export const savedRepliesEn = {
  'replies.lead': 'Saved replies are inserted in the composer: type # and a few letters of the name or text. Placeholders are filled in for the conversation.',
  'replies.placeholders': 'Placeholders',
  'replies.placeholders_hint':
    'Use them in saved replies and signatures. A fallback after a bar replaces a missing value: {{contact.first_name|friend}}. Without one, a missing contact name becomes “there”, anything else stays empty.',
  'replies.title': 'Saved replies',
  'replies.table': 'Saved replies by name',
  'replies.new': 'New saved reply',
  'replies.edit_title': 'Edit #{name}',
  'replies.name': 'Name',
  'replies.name_hint': 'What you type after # to find it. Up to 64 characters.',
  'replies.body': 'Text',
  'replies.body_placeholder': 'Write the reply. Format with the toolbar or Markdown: **bold**, - list, > quote.',
  'signature.placeholder': 'Your name, role, a link…',
  'replies.scope': 'Who can use it',
  'replies.workspace': 'Everyone',
  'replies.personal_long': 'Only me (personal)',
  'replies.workspace_long': 'Everyone in the workspace',
  'replies.workspace_managers': 'Only owners and admins can save replies for everyone.',
  'replies.empty': 'No saved replies yet.',
  'replies.actions': 'Actions',
  'replies.edit': 'Edit',
  'replies.edit_named': 'Edit #{name}',
  'replies.delete': 'Delete',
  'replies.delete_named': 'Delete #{name}',
  'replies.delete_confirm': 'Delete the saved reply #{name}? Nobody can insert it any more.',
  'signature.mine': 'My signature',
  'signature.inbox': 'Inbox signature',
  'signature.text': 'Signature',
  'signature.mine_hint':
    'Added under your e-mail replies in this workspace, before the inbox signature. Never added to notes or chat replies. Leave empty for none.',
  'signature.inbox_hint': 'Added under every e-mail reply from this inbox, after the member’s own signature. Leave empty for none.',
} as const;

declare module '../../../i18n' {
  interface Messages extends Record<keyof typeof savedRepliesEn, string> {}
}
