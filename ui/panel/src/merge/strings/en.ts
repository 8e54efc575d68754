// Merge and split: the strings in English. tr.ts has the same keys (test/panel/strings.test.ts checks it).
export const mergeEn = {
  'merge.button': 'Merge…',
  'merge.title': 'Merge into another conversation',
  'merge.search': 'Find by subject or contact',
  'merge.hint': 'Everything in this conversation moves into the one you choose. You can undo it for 24 hours.',
  'merge.none': 'No conversation to merge into. Try another subject, name or address.',
  'merge.searching': 'Searching…',
  'merge.into': 'Merge into this',
  'merge.done': 'Merged into “{subject}”.',
  'merge.undo': 'Undo',
  'merge.undone': 'The merge was undone.',
  'merge.stub': 'This conversation was merged into another one.',
  'merge.open_target': 'Open it',
  'merge.undo_until': 'Undo merge (until {time})',
  'merge.duplicate': 'Possible duplicate: “{subject}”, {when}',
  'merge.duplicate_merge': 'Merge into it',
  'merge.dismiss': 'Dismiss',
  'merge.split': 'Split',
  'merge.split_title': 'Split into a new conversation',
  'merge.split_text': 'This message and the later messages of its thread move into a new conversation. Replies to them will land there.',
  'merge.split_confirm': 'Split',
  'merge.split_done': 'Split into a new conversation.',
  'merge.split_pick_title': 'Split from which message?',
  'merge.split_pick_filter': 'Type to find a message',
  'merge.split_pick_empty': 'No message matches.',
  'merge.cancel': 'Cancel',
  'merge.event_into': 'Merged into another conversation',
  'merge.event_from': 'Another conversation was merged into this one',
  'merge.event_unmerged_into': 'The merge into another conversation was undone',
  'merge.event_unmerged_from': 'A merged conversation was taken back out',
  'merge.event_split_into': 'Messages were split into a new conversation',
  'merge.event_split_from': 'Split from another conversation',
  'merge.shortcut': 'Merge the open conversation',
} as const;

declare module '../../i18n' {
  interface Messages extends Record<keyof typeof mergeEn, string> {}
}
