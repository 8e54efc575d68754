// Table types of the foundation. Times are ISO 8601 text; flags are 0/1; JSON columns are text.
import type { Generated } from 'kysely';

export type Role = 'owner' | 'admin' | 'agent';

export interface ServerMetaTable {
  key: string;
  value: string;
}

export interface WorkspacesTable {
  id: string;
  name: string;
  origin: 'bootstrap' | 'signup';
  retention_days: number | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface PeopleTable {
  id: string;
  email: string;
  name: string | null;
  locale: string;
  /** Undo send (0051): seconds the panel holds a reply before it is sent; 0 = off, at most 60. */
  undo_send_seconds?: number;
  created_at: string;
  updated_at: string;
}

export interface MembershipsTable {
  id: string;
  workspace_id: string;
  person_id: string;
  role: Role;
  created_at: string;
  /** JSON array of the inboxes an agent is limited to; null = every inbox (0012). */
  inbox_ids: string | null;
  /** Last request in this workspace, kept to 5 minutes (0012). */
  last_seen_at: string | null;
}

export interface SessionsTable {
  id: string;
  person_id: string;
  token_hash: string;
  created_at: string;
  last_used_at: string;
  expires_at: string;
  /** The browser that signed in, cut to 200 characters (0012). */
  user_agent: string | null;
}

export interface SignInCodesTable {
  id: string;
  email: string;
  code_hash: string;
  attempts: Generated<number>;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

export interface ApiKeysTable {
  id: string;
  workspace_id: string;
  name: string;
  prefix: string;
  secret_hash: string;
  scopes: string;
  inbox_ids: string | null;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}

export interface InboxesTable {
  id: string;
  workspace_id: string;
  name: string;
  slug: string;
  locale: string;
  timezone: string;
  mode: 'live' | 'async';
  expected_reply_minutes: number | null;
  identity_secret_sealed: string;
  created_at: string;
  updated_at: string;
  /** Set when the inbox was deleted (0014); the deletion job removes the row afterwards. */
  deleted_at: string | null;
}

export interface ChannelsTable {
  id: string;
  workspace_id: string;
  inbox_id: string;
  kind: 'email' | 'chat';
  name: string;
  address: string | null;
  display_name: string | null;
  from_address: string | null;
  smtp_host: string | null;
  smtp_port: number | null;
  smtp_tls: 'starttls' | 'tls' | 'none' | null;
  smtp_username: string | null;
  smtp_password_sealed: string | null;
  /** How the SMTP account signs in (0062): its password, or the channel's Google or Microsoft grant (src/mail-accounts). */
  smtp_auth: 'password' | 'google' | 'microsoft';
  forwarding_address: string | null;
  public_key: string | null;
  origins: string | null;
  allow_anonymous: number | null;
  ask_email_offline: number | null;
  greeting: string | null;
  created_at: string;
  updated_at: string;
}

/** One SMTP connection test of an e-mail channel (0014): what the test's rate limit counts. */
export interface ChannelSmtpTestsTable {
  id: string;
  channel_id: string;
  at: string;
  ok: number;
  failed_step: string | null;
}

export interface JobsTable {
  id: string;
  kind: string;
  unique_key: string | null;
  payload: string;
  run_at: string;
  attempts: Generated<number>;
  lease_until: string | null;
  last_error: string | null;
  created_at: string;
}

export interface EventsTable {
  seq: Generated<number>;
  id: string;
  workspace_id: string;
  inbox_id: string | null;
  contact_id: string | null;
  type: string;
  occurred_at: string;
  data: string;
  audience: 'all' | 'admins';
  webhook: number;
  is_note: number;
  /** JSON array of the inboxes the event concerns (an inbox-limited reader or endpoint sees it); added by 0003. */
  related_inbox_ids: string | null;
  /** A realtime-only event for one member alone (a notification, 0018); null for all others. */
  person_id: string | null;
  /** Postgres only (0003): the stream position, assigned at commit. SQLite orders by seq. */
  position?: Generated<number | null>;
}

/** A fixed-window counter shared by every server process (0021); `key` is a hash of the limit's name and what it counts. */
export interface RateLimitsTable {
  key: string;
  window_ends_at: string;
  count: number;
}

export interface CoreTables {
  server_meta: ServerMetaTable;
  rate_limits: RateLimitsTable;
  workspaces: WorkspacesTable;
  people: PeopleTable;
  memberships: MembershipsTable;
  sessions: SessionsTable;
  sign_in_codes: SignInCodesTable;
  api_keys: ApiKeysTable;
  inboxes: InboxesTable;
  channels: ChannelsTable;
  channel_smtp_tests: ChannelSmtpTestsTable;
  jobs: JobsTable;
  events: EventsTable;
}
