// Conversations: the workspace (list, conversation, composer, details), its nav and search.
export { Workspace } from './Workspace';
