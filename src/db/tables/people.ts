// Table types of what a person owns besides their account: passkeys (and their challenges) and Web
// Push subscriptions.
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

/** A WebAuthn challenge handed out with passkey options; deleted when it is used. */
export interface PasskeyChallengesTable {
  /** base64url, as it appears in the client's clientDataJSON. */
  challenge: string;
  purpose: PasskeyChallengePurpose;
  /** register: the signed-in person; sign_in_person: the typed address's person (null: no account); sign_in_any: null. */
  person_id: string | null;
  created_at: string;
  expires_at: string;
}

export type PasskeyChallengePurpose = 'register' | 'sign_in_any' | 'sign_in_person';

export interface PeopleTables {
  passkeys: PasskeysTable;
  passkey_challenges: PasskeyChallengesTable;
  push_subscriptions: PushSubscriptionsTable;
}
