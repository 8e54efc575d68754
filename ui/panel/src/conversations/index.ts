// Conversations: the workspace (list, conversation, composer, details), its nav and search.

// The composer's formatted text box (its editor loads lazily), for saved replies and signatures.
export { RichText, type RichTextHandle } from './editor/RichText';
export { textToHtml } from './editor/text';
export { watchInstallability } from './InstallHint';
export { Workspace } from './Workspace';
