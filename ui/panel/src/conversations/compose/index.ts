// Forwarding and new conversations in the panel (issue 33).
export { ForwardDialog, ForwardedLine, NewConversationDialog } from './ComposeDialogs';
