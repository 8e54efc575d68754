// Auto-assignment (migration 0049): per-inbox settings, members' availability and the cursors.
export type AssignmentMode = 'off' | 'round_robin' | 'least_busy';
/** No row: available while online in the panel. */
export type AvailabilityStatus = 'available' | 'away';

export interface InboxAssignmentTable {
  inbox_id: string;
  workspace_id: string;
  assignment: AssignmentMode;
  capacity: number | null;
  updated_at: string;
}

export interface MemberAvailabilityTable {
  workspace_id: string;
  person_id: string;
  status: AvailabilityStatus;
  updated_at: string;
}

/** One row per workspace, locked by every auto-assignment: JSON { poolId: last assigned person id }. */
export interface AssignmentCursorsTable {
  workspace_id: string;
  cursors: string;
  updated_at: string;
}

export interface AssignmentTables {
  inbox_assignment: InboxAssignmentTable;
  member_availability: MemberAvailabilityTable;
  assignment_cursors: AssignmentCursorsTable;
}
