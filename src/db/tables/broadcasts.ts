// Table types of broadcasts, their governance (approval, suspension, limits, warm-up), recipients,
// suppressions, daily sending totals and the operator digest. Times are ISO 8601 text.
import type { Generated } from 'kysely';

/** Stored governance status; null means the default of the workspace's origin (see broadcasts/governance.ts). */
export type GovernanceStatus = 'requested' | 'approved' | 'denied' | 'suspended';

export interface BroadcastGovernanceTable {
  workspace_id: string;
  status: GovernanceStatus | null;
  /** The operator's reason (≤ 500 characters) or the automatic suspension's rates; shown to owners. */
  reason: string | null;
  suspended_by: 'operator' | 'automatic' | null;
  suspended_at: string | null;
  decided_at: string | null;
  /** The operator's recipients-per-UTC-day limit of this workspace; null when none. */
  daily_limit: number | null;
  /** The warm-up allowance reached (500 at first, doubled after each clean day). */
  warmup_allowance: number;
  /** The last UTC day whose sending was folded into warmup_allowance. */
  warmup_through_day: string | null;
  request_email: string | null;
  request_website: string | null;
  request_senders: string | null;
  request_consent: string | null;
  requested_at: string | null;
  created_at: string;
  updated_at: string;
}

export type BroadcastStatus = 'draft' | 'scheduled' | 'sending' | 'paused' | 'sent' | 'cancelled';
export type PauseReason = 'manual' | 'workspace_suspended' | 'mailer_tenant' | 'bounce_rate' | 'complaint_rate' | 'sender_error';

export interface BroadcastsTable {
  id: string;
  workspace_id: string;
  inbox_id: string;
  channel_id: string | null;
  subject: string;
  text: string;
  html: string | null;
  status: BroadcastStatus;
  pause_reason: PauseReason | null;
  /** What caused the pause (the rates, the SMTP server's answer); never addresses. */
  pause_detail: string | null;
  paused_at: string | null;
  /** When sending starts (scheduled). */
  send_at: string | null;
  started_at: string | null;
  /** When it was sent completely or cancelled (recipients are kept 400 days after this). */
  finished_at: string | null;
  /** When retention deleted the recipients (400 days after finishing); the counts stay. */
  recipients_deleted_at: string | null;
  /** While today's allowance is used up: when sending continues. */
  continues_at: string | null;
  sender_domain: string | null;
  /** Consecutive sender-level failures (connection, login, refused sender); reset by a successful send. */
  sender_failures: Generated<number>;
  recipients_count: Generated<number>;
  sent_count: Generated<number>;
  failed_count: Generated<number>;
  suppressed_count: Generated<number>;
  bounced_count: Generated<number>;
  complained_count: Generated<number>;
  unsubscribed_count: Generated<number>;
  /** A contact segment as the audience: its contacts become recipients when sending starts. */
  segment_id: Generated<string | null>;
  /** When the segment was turned into recipients (once, at the start of sending). */
  segment_resolved_at: Generated<string | null>;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export type RecipientStatus = 'pending' | 'sending' | 'sent' | 'failed' | 'suppressed';

export interface BroadcastRecipientsTable {
  broadcast_id: string;
  seq: number;
  email: string;
  contact_id: string | null;
  status: RecipientStatus;
  attempts: Generated<number>;
  retry_at: string | null;
  error: string | null;
  sent_at: string | null;
  /** The id the SMTP server gave in its 250 answer (Amazon SES's message id). */
  provider_message_id: string | null;
  bounced_at: string | null;
  complained_at: string | null;
  unsubscribed_at: string | null;
}

export interface BroadcastSuppressionsTable {
  workspace_id: string;
  email: string;
  reason: 'unsubscribed' | 'bounced' | 'complained';
  broadcast_id: string | null;
  created_at: string;
}

export interface BroadcastDailyTotalsTable {
  workspace_id: string;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  /** Recipients taken from the day's allowance. */
  reserved: Generated<number>;
  sent: Generated<number>;
  failed: Generated<number>;
  /** Permanent bounces and complaints of the mails sent that day. */
  bounced: Generated<number>;
  complained: Generated<number>;
  /** Broadcasts that paused themselves that day for their bounce or complaint rate. */
  rate_pauses: Generated<number>;
}

export type DigestLineKind = 'approval_requested' | 'workspace_suspended' | 'broadcast_paused' | 'tenant_paused' | 'analytics_limit';

export interface OperatorDigestLinesTable {
  id: string;
  kind: DigestLineKind;
  workspace_id: string | null;
  text: string;
  created_at: string;
  sent_at: string | null;
}

export interface BroadcastTables {
  broadcast_governance: BroadcastGovernanceTable;
  broadcasts: BroadcastsTable;
  broadcast_recipients: BroadcastRecipientsTable;
  broadcast_suppressions: BroadcastSuppressionsTable;
  broadcast_daily_totals: BroadcastDailyTotalsTable;
  operator_digest_lines: OperatorDigestLinesTable;
}
