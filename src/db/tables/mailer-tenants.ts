// Table types of the per-inbox Amazon SES tenants and the managed-channel checks.

export type TenantSendingStatus = 'ENABLED' | 'REINSTATED' | 'DISABLED';

export interface MailerTenantsTable {
  inbox_id: string;
  workspace_id: string;
  /** `<SVC_MAILER_TENANT_PREFIX><inbox id>`. */
  tenant_name: string;
  tenant_id: string | null;
  tenant_arn: string | null;
  /** pending: to be created at the provider; ready: created, associated and tagged. */
  state: 'pending' | 'ready';
  sending_status: TenantSendingStatus | null;
  /** Who disabled sending: the reputation policy (customer-managed status) or the provider itself. */
  paused_by: 'reputation_policy' | 'provider' | null;
  /** The provider's cause of the current status. */
  cause: string | null;
  /** JSON array of {type, arn}: the configuration set and sending identities associated. */
  resources: string;
  status_checked_at: string | null;
  status_changed_at: string | null;
  /** The provider's last error (shown by `svc inbox mailer-tenant show`), cleared by a success. */
  last_error: string | null;
  last_error_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface MailerChannelsTable {
  channel_id: string;
  inbox_id: string;
  workspace_id: string;
  managed: number;
  /** Why it is or is not managed (shown by the show command). */
  reason: string;
  /** The verified identity (domain or address) the channel sends as, when found. */
  identity: string | null;
  checked_at: string;
}

export interface MailerTenantTables {
  mailer_tenants: MailerTenantsTable;
  mailer_channels: MailerChannelsTable;
}
