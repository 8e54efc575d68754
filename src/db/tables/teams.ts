// Teams (migration 0049): a workspace's teams, their members and the inboxes they serve.
import type { AssignmentMode } from './assignment.js';

export interface TeamsTable {
  id: string;
  workspace_id: string;
  name: string;
  /** The name in lower case: unique per workspace. */
  name_key: string;
  /** Auto-assignment of the team's new and reopened conversations among its members. */
  assignment: AssignmentMode;
  /** At most this many open conversations assigned per member by auto-assignment; null: no limit. */
  capacity: number | null;
  created_at: string;
  updated_at: string;
}

export interface TeamMembersTable {
  team_id: string;
  person_id: string;
  workspace_id: string;
  created_at: string;
}

export interface TeamInboxesTable {
  team_id: string;
  inbox_id: string;
  workspace_id: string;
}

export interface TeamsTables {
  teams: TeamsTable;
  team_members: TeamMembersTable;
  team_inboxes: TeamInboxesTable;
}
