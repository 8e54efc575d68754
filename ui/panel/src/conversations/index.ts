// Conversations: the workspace (list, conversation, composer, details), its nav and search.

export { watchInstallability } from './InstallHint';
export { Workspace } from './Workspace';
