export { InboxSignatureCard, SavedRepliesSettings } from './SavedRepliesSettings';
