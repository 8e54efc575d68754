// Merge and split in the panel: the conversation's Merge control, the duplicate hint, the stub's banner, the undo toast, Split on a message.
export { DuplicateHint, MergeButton, MergedBanner, MergeUndoToast, mergeAsked, mergeEventText, SplitButton, SplitPicker, splitAsked } from './Merge';
