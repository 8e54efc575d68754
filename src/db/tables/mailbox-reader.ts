// Channels that read their own mailbox (migration 0063, src/mailbox-reader).

export type MailboxReaderKind = 'imap' | 'google' | 'microsoft';
export type MailboxReaderState = 'connecting' | 'idle' | 'polling' | 'needs_attention';

export interface MailboxReadersTable {
  channel_id: string;
  workspace_id: string;
  kind: MailboxReaderKind;
  host: string | null;
  port: number | null;
  tls: 'tls' | 'starttls' | 'none' | null;
  username: string | null;
  /** Sealed under the master key; never shown. */
  password_sealed: string | null;
  state: MailboxReaderState;
  /** How new mail is noticed while connected: IDLE or a poll. */
  mode: 'idle' | 'polling' | null;
  error_step: string | null;
  error_message: string | null;
  /** Failures in a row: the wait before the next try doubles with each (1 min → 30 min). */
  failures: number;
  retry_at: string | null;
  last_read_at: string | null;
  connected_at: string | null;
  /** The process (ctx.instanceId) reading the mailbox, until lease_until. */
  lease_owner: string | null;
  lease_until: string | null;
  created_at: string;
  updated_at: string;
}

export interface MailboxReaderFoldersTable {
  channel_id: string;
  role: 'inbox' | 'sent';
  path: string;
  uid_validity: string;
  /** Every message up to this UID is stored (or was there before the reader connected). */
  last_uid: number;
  updated_at: string;
}

export interface MailboxReaderTables {
  mailbox_readers: MailboxReadersTable;
  mailbox_reader_folders: MailboxReaderFoldersTable;
}
