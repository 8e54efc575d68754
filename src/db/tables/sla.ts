// SLA (migration 0046): targets per inbox and priority, and the outcome of every target for reports.
// Each conversation's running SLA state lives on the conversation (conversations.sla, sla_due_at).

export type SlaTarget = 'first_response' | 'next_response' | 'resolution';

/** One row per inbox and priority; priority '' is the inbox's default. A null target is not tracked. */
export interface InboxSlaPoliciesTable {
  inbox_id: string;
  priority: string;
  workspace_id: string;
  first_response_minutes: number | null;
  next_response_minutes: number | null;
  resolution_minutes: number | null;
  updated_at: string;
}

/** How a target ended: met in time, or breached (once per target and due time). */
export interface SlaOutcomesTable {
  conversation_id: string;
  target: SlaTarget;
  due_at: string;
  workspace_id: string;
  inbox_id: string;
  /** The assignee when it ended ('' for none). */
  member_id: string;
  outcome: 'met' | 'breached';
  at: string;
  /** UTC day of `at`, as report_days. */
  day: string;
}

export interface SlaTables {
  inbox_sla_policies: InboxSlaPoliciesTable;
  sla_outcomes: SlaOutcomesTable;
}
