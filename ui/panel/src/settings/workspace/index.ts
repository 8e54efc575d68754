export { WorkspaceSettings } from './WorkspaceSettings';
