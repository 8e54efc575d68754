// Table types of mailbox migrations (copying the history of an old mailbox, then switching delivery).
// Times are ISO 8601 text; flags are 0/1; JSON columns are text.

export type MigrationState =
  | 'draft'
  | 'connected'
  | 'scanning'
  | 'ready'
  | 'copying'
  | 'paused'
  | 'needs_attention'
  | 'syncing'
  | 'completed'
  | 'cancelled'
  | 'removing'
  | 'removed';

export type ImapTlsMode = 'tls' | 'starttls' | 'none';

export interface MailboxMigrationsTable {
  id: string;
  workspace_id: string;
  state: MigrationState;
  /** A preset id of GET /v1/migrations/presets ('imap' for any other server, 'export_file'). */
  provider: string;
  source_address: string | null;
  imap_host: string | null;
  imap_port: number | null;
  imap_tls: ImapTlsMode | null;
  username: string | null;
  /** The mailbox password, sealed under the master key; null once deleted. Never leaves the server. */
  password_sealed: string | null;
  credentials_set_at: string | null;
  inbox_id: string | null;
  channel_id: string | null;
  /** JSON array of folder paths; null: the provider's default folders. */
  folders: string | null;
  date_from: string | null;
  date_to: string | null;
  /** JSON object folder path → label (null: no label). */
  folder_labels: string;
  /** JSON object team address → member (person id) or null (shown by original name and address). */
  team_members: string;
  close_after_days: number;
  skip_automatic: number;
  keep_originals: number;
  /** Goes up with every change of a choice; the plan (scan) is current when scanned_version equals it. */
  plan_version: number;
  scanned_version: number | null;
  /** JSON: the dry run's summary (counts per folder, skipped items, contacts, labels, estimates). */
  summary: string | null;
  /** The state a needs_attention migration returns to once fixed (copying or syncing). */
  resume_state: MigrationState | null;
  attention_reason: string | null;
  attention_message: string | null;
  /** When the next automatic attempt after a provider limit or connection failure is due. */
  attention_retry_at: string | null;
  /** Consecutive connection failures (a run of them moves the migration to needs_attention). */
  connect_failures: number;
  /** Commands the read-only check refused (the connection was closed before they were sent). */
  blocked_commands: number;
  copy_started_at: string | null;
  /** Mail the old mailbox received before this moment is history; later mail is new mail. */
  copy_ended_at: string | null;
  /** Completed, cancelled (or stopped by the sync limit): the audit period counts from here. */
  ended_at: string | null;
  deleted_at: string | null;
  /** When the old mailbox was last read for new mail while syncing. */
  sync_polled_at: string | null;
  /** The test message: its token (in its Message-ID and a header), when it was sent and arrived. */
  probe_token: string | null;
  probe_sent_at: string | null;
  probe_arrived_at: string | null;
  /** How the test message reached the server: forwarding (to the forwarding address) or direct. */
  probe_route: 'forwarding' | 'direct' | null;
  /** The last time mail turned up only in the old mailbox (the quiet period counts from then too). */
  last_old_only_at: string | null;
  /** Why it ended: quiet_period, finish, finish_forced, sync_limit, cancelled. */
  end_reason: string | null;
  /** JSON of remove-history while removing and after: the confirmed count and what was deleted. */
  removal: string | null;
  /** 1: at completion the channel keeps reading the mailbox live with the migration's credentials. */
  keep_reading: number;
  /** What the completion did with keep_reading: handed_over, or the reason it was skipped. */
  reading_handover: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface MailboxMigrationFoldersTable {
  migration_id: string;
  path: string;
  delimiter: string | null;
  special_use: string | null;
  uid_validity: string | null;
  /** Headers were read through this UID (the scan's resume point). */
  scanned_uid: number;
  /** Every message of the folder when the scan began (all of them count in the total). */
  messages: number;
  /** The folder's UIDNEXT when its scan began: later UIDs are new mail. */
  uid_next: number | null;
  scan_done: number;
}

export type MigrationItemStatus = 'planned' | 'skipped' | 'duplicate' | 'copied' | 'failed';

/**
 * One message of the source (a folder UID, or an entry of an export file). The per-source identity
 * (source_key) never repeats within a migration, so re-reading a folder or resuming after a crash
 * never makes a second copy; Message-IDs de-duplicate across folders and migrations.
 */
export interface MailboxMigrationItemsTable {
  migration_id: string;
  source_key: string;
  folder: string;
  uid: number | null;
  rfc_id: string | null;
  /** JSON array of the Message-IDs of In-Reply-To and References. */
  refs: string | null;
  thread_key: string | null;
  sent_at: string;
  size: number;
  from_address: string | null;
  from_name: string | null;
  /** JSON array of To and Cc addresses. */
  recipients: string | null;
  subject: string | null;
  /** JSON array of the source's flags (IMAP flags, or Maildir flags of an export). */
  flags: string | null;
  /** JSON array of the message's Gmail labels (X-GM-LABELS; Gmail only), mapped like folders. */
  gmail_labels: string | null;
  automatic: number;
  team: number;
  status: MigrationItemStatus;
  skip_reason: string | null;
  error: string | null;
  attempts: number;
  message_id: string | null;
  conversation_id: string | null;
  copied_at: string | null;
  /** 1: received by the old mailbox after the copy ended and delivered as new mail while syncing. */
  new_mail?: number;
}

export type MigrationThreadStatus = 'planned' | 'skipped' | 'copied';

/** Threads (joined by References and In-Reply-To only) in the order they are copied: newest first. */
export interface MailboxMigrationThreadsTable {
  migration_id: string;
  thread_key: string;
  newest_at: string;
  messages: number;
  customer_address: string | null;
  customer_name: string | null;
  subject: string | null;
  status: MigrationThreadStatus;
  skip_reason: string | null;
  conversation_id: string | null;
}

/** Contacts a migration created (remove-history deletes those left without a conversation). */
export interface MailboxMigrationContactsTable {
  migration_id: string;
  contact_id: string;
  created_at: string;
}

/** The activity log of a migration; kept SVC_MIGRATION_AUDIT_DAYS after the migration ends. */
export interface MailboxMigrationLogTable {
  id: string;
  migration_id: string;
  workspace_id: string;
  at: string;
  /** member, api_key or system. */
  actor_type: string;
  actor_id: string | null;
  action: string;
  /** JSON details (never a secret). */
  detail: string | null;
}

/** A link to the panel page where a person enters the mailbox password (single use, expiring). */
export interface MigrationCredentialLinksTable {
  id: string;
  migration_id: string;
  workspace_id: string;
  /** SHA-256 (hex) of the token; the token itself is only in the link. */
  token_hash: string;
  /** Who asked for the link (member or api_key); it works only while they may still manage migrations. */
  created_by_type: 'member' | 'api_key';
  created_by_id: string;
  created_at: string;
  expires_at: string;
  /** Set once a password entered through it connected; the link cannot be used again. */
  used_at: string | null;
}

/** A help-desk source (Zendesk, Help Scout) of a migration: where it is read and how far. */
export interface MigrationHelpdeskSourcesTable {
  migration_id: string;
  /** Zendesk: the subdomain (acme for acme.zendesk.com); Help Scout: null. Not a secret. */
  account: string | null;
  /** The provider's resume point (Zendesk after_cursor, Help Scout JSON {modified_since, page}). */
  cursor: string | null;
  /** 1 once the export reached its end (the scan may begin); sync reads on from the cursor. */
  pull_done: number;
  next_uid: number;
  /** JSON array of the agents' addresses seen (their comments are the team's). */
  agents: string;
  pulled_at: string | null;
}

/** One comment (Zendesk) or thread (Help Scout) read from the help desk; uid is its number in this migration. */
export interface MigrationHelpdeskEntriesTable {
  migration_id: string;
  uid: number;
  entry_key: string;
  ticket_id: string;
  sent_at: string;
  /** JSON of the entry as the copy renders it (see sources/helpdesk/entry.ts). */
  data: string;
}

export type MigrationUploadState = 'processing' | 'read' | 'failed';
export type MigrationUploadPhase = 'verifying' | 'reading';

/**
 * An export-file upload once `complete` was asked for (no row: parts are still being received).
 * The processing job verifies the parts' whole-file SHA-256, then reads the file into the message
 * spool; progress, the outcome and a refused file's cause are kept here for GET …/upload.
 */
export interface MailboxMigrationUploadsTable {
  migration_id: string;
  workspace_id: string;
  state: MigrationUploadState;
  phase: MigrationUploadPhase | null;
  /** Parts and bytes of the file as completed. */
  parts: number;
  bytes: number;
  /** The whole file's SHA-256 the client named (checked), or null. */
  expected_sha256: string | null;
  /** The whole file's SHA-256 once verified (a restarted job goes on with the read). */
  sha256: string | null;
  /** Bytes done and to do in the current phase (verifying: of the file; reading: uncompressed). */
  done_bytes: number;
  total_bytes: number;
  /** Messages found so far (reading) or in the file (read). */
  messages: number;
  /** A refused file: RefusalReason or sha256_mismatch, and the message shown. */
  error_reason: string | null;
  error_message: string | null;
  /** Who completed the upload (the activity log names them when the file is read). */
  actor_type: string;
  actor_id: string | null;
  /** The run processing it now and until when its claim holds (renewed as it goes). */
  runner: string | null;
  runner_until: string | null;
  started_at: string;
  updated_at: string;
  finished_at: string | null;
}

/**
 * A sign-in with Google or Microsoft under way (PUT …/credentials of a sign-in provider): the
 * OAuth `state` is single use (the row is deleted when the callback comes), expires, and is bound
 * to the migration and to who started it.
 */
export interface MigrationSignInsTable {
  /** SHA-256 (hex) of the `state` sent to the provider. */
  state_hash: string;
  migration_id: string;
  workspace_id: string;
  provider: string;
  /** The address signed in as (XOAUTH2's user), sent as login_hint. */
  username: string;
  /** The PKCE code_verifier, sealed under the master key. */
  verifier_sealed: string;
  /**
   * Who started it: a member (whose panel session must bring the callback), an API key, or a
   * credentials link (created_by_id is the link's id; its creator's access applies, any browser may finish).
   */
  created_by_type: 'member' | 'api_key' | 'link';
  created_by_id: string;
  created_at: string;
  expires_at: string;
}

export interface MailboxMigrationTables {
  mailbox_migrations: MailboxMigrationsTable;
  mailbox_migration_folders: MailboxMigrationFoldersTable;
  mailbox_migration_items: MailboxMigrationItemsTable;
  mailbox_migration_threads: MailboxMigrationThreadsTable;
  mailbox_migration_contacts: MailboxMigrationContactsTable;
  mailbox_migration_log: MailboxMigrationLogTable;
  migration_credential_links: MigrationCredentialLinksTable;
  migration_helpdesk_sources: MigrationHelpdeskSourcesTable;
  migration_helpdesk_entries: MigrationHelpdeskEntriesTable;
  mailbox_migration_uploads: MailboxMigrationUploadsTable;
  migration_sign_ins: MigrationSignInsTable;
}
