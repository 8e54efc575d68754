// Forwarding and new conversations in the panel (issue 33).
export { composeAsked, ForwardDialog, type ForwardDraft, ForwardedLine, linesOf, NewConversationDialog, type NewDraft } from './ComposeDialogs';
