// Automation rules, their run log and macros (migration 0053; owned by src/automation).

export interface AutomationRulesTable {
  id: string;
  workspace_id: string;
  name: string;
  enabled: number;
  /** 0-based order the rules run in. */
  position: number;
  /** The trigger's type alone (what the reaction looks up); `trigger` holds the whole JSON. */
  trigger_type: string;
  trigger: string;
  /** JSON `{match, items}`. */
  conditions: string;
  /** JSON Action[]. */
  actions: string;
  created_at: string;
  updated_at: string;
  last_run_at: string | null;
}

export interface AutomationRunsTable {
  id: string;
  workspace_id: string;
  rule_id: string;
  rule_name: string;
  conversation_id: string;
  trigger: string;
  outcome: 'acted' | 'no_match' | 'skipped';
  reason: string | null;
  /** JSON Action[]: what changed something. */
  actions: string;
  /** Unique: the event and rule (or timer) of the run, so a job run twice logs and acts once. */
  run_key: string;
  created_at: string;
}

/** A rule's saved reply went out in this conversation (at most once). */
export interface AutomationRepliesSentTable {
  rule_id: string;
  conversation_id: string;
  workspace_id: string;
  created_at: string;
}

export interface MacrosTable {
  id: string;
  workspace_id: string;
  name: string;
  shared: number;
  /** The member a personal macro belongs to (null for a shared one). */
  owner_person_id: string | null;
  actions: string;
  created_at: string;
  updated_at: string;
}

export interface AutomationTables {
  automation_rules: AutomationRulesTable;
  automation_runs: AutomationRunsTable;
  automation_replies_sent: AutomationRepliesSentTable;
  macros: MacrosTable;
}
