// Table types of src/auth: the credentials epoch (migration 0024).

/**
 * One row (id 1) whose `epoch` triggers move in the transaction of any change that can end or
 * narrow a credential (keys, sessions, memberships, people, workspaces); cached credentials hold
 * only while it stays the same.
 */
export interface CredentialsEpochTable {
  id: number;
  epoch: number;
}

export interface AuthTables {
  credentials_epoch: CredentialsEpochTable;
}
