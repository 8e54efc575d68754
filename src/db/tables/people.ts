// Table types of what a person owns besides their account: passkeys and Web Push subscriptions.
import type { Generated } from 'kysely';

/** A WebAuthn credential: what verifying an assertion needs (the registration ceremony fills it). */
export interface PasskeysTable {
  id: string;
  person_id: string;
  /** base64url credential id, as the authenticator returned it. */
  credential_id: string;
  /** base64url COSE_Key. */
  public_key: string;
  sign_count: Generated<number>;
  /** JSON array of transports (usb, nfc, ble, internal, hybrid). */
  transports: string | null;
  aaguid: string | null;
  backup_eligible: number;
  backed_up: number;
  name: string | null;
  created_at: string;
  last_used_at: string | null;
}

/** A browser's PushSubscription (endpoint and keys) for Web Push notifications. */
export interface PushSubscriptionsTable {
  id: string;
  person_id: string;
  endpoint: string;
  /** base64url, a 65-byte uncompressed P-256 point. */
  key_p256dh: string;
  /** base64url, 16 bytes. */
  key_auth: string;
  expires_at: string | null;
  user_agent: string | null;
  created_at: string;
  updated_at: string;
}

export interface PeopleTables {
  passkeys: PasskeysTable;
  push_subscriptions: PushSubscriptionsTable;
}
