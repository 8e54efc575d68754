// An e-mail channel's sign-in with Google or Microsoft (migration 0062, src/mail-accounts).

export type GrantProvider = 'google' | 'microsoft';

/** One per channel: the sealed grant and whether the provider still accepts it. */
export interface ChannelGrantsTable {
  channel_id: string;
  workspace_id: string;
  provider: GrantProvider;
  /** The address signed in as (the XOAUTH2 user name). */
  account: string;
  /** JSON { refresh_token, access_token, expires_at } sealed under the master key. */
  grant_sealed: string;
  /** When the current access token expires (not secret: shown to nobody, used to decide a refresh). */
  access_expires_at: string | null;
  state: 'ok' | 'revoked';
  /** The provider's words when it refused the grant. */
  error: string | null;
  revoked_at: string | null;
  /** When the managers were told of the revocation (once per revocation; null again after a new sign-in). */
  told_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A sign-in under way (single use, expiring): the state's SHA-256 and the sealed PKCE verifier. */
export interface ChannelSignInsTable {
  state_hash: string;
  channel_id: string;
  workspace_id: string;
  provider: GrantProvider;
  username: string;
  verifier_sealed: string;
  created_by_type: 'member' | 'api_key';
  created_by_id: string;
  created_at: string;
  expires_at: string;
}

export interface MailAccountTables {
  channel_grants: ChannelGrantsTable;
  channel_sign_ins: ChannelSignInsTable;
}
