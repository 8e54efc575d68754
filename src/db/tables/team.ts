// Table types of team membership beyond the foundation: invites and operator-made sign-in links.
import type { Role } from './core.js';

/** An invitation to join a workspace; the token is shown once and stored as a SHA-256 hash. */
export interface InvitesTable {
  id: string;
  workspace_id: string;
  email: string;
  role: Role;
  /** JSON array of inboxes the invited agent is limited to; null = every inbox. */
  inbox_ids: string | null;
  token_hash: string;
  invited_by: string | null;
  created_at: string;
  /** When the invite mail last went out (null: never sent). */
  sent_at: string | null;
  expires_at: string;
  accepted_at: string | null;
  accepted_by: string | null;
  revoked_at: string | null;
}

/** A one-time sign-in link for a person (svc bootstrap, svc person sign-in-link); hashed token. */
export interface SignInLinksTable {
  id: string;
  person_id: string;
  token_hash: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

export interface TeamTables {
  invites: InvitesTable;
  sign_in_links: SignInLinksTable;
}
