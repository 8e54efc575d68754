// The migration state machine: which actions each state allows (the migration lists them as
// allowed_actions) and the refusal for anything else (409 migration_state with the state and the
// allowed actions).
import type { MailboxMigrationsTable, MigrationState } from '../db/schema.js';
import { AppError } from '../platform/errors.js';
import { findPreset } from './sources/presets.js';

export const MIGRATION_STATES: readonly MigrationState[] = [
  'draft',
  'connected',
  'scanning',
  'ready',
  'copying',
  'paused',
  'needs_attention',
  'syncing',
  'completed',
  'cancelled',
  'removing',
  'removed',
];

export type MigrationAction =
  | 'update'
  | 'delete'
  | 'credentials'
  | 'test'
  | 'folders'
  | 'upload'
  | 'scan'
  | 'preview'
  | 'start'
  | 'pause'
  | 'resume'
  | 'cancel'
  | 'retry'
  | 'probe'
  | 'finish'
  | 'remove_history'
  | 'keep_reading';

/** Actions by state, for every source kind; source-specific ones are filtered in allowedActions. */
const BY_STATE: Record<MigrationState, readonly MigrationAction[]> = {
  draft: ['update', 'delete', 'credentials', 'test', 'folders', 'upload', 'cancel', 'keep_reading'],
  connected: ['update', 'delete', 'credentials', 'test', 'folders', 'scan', 'cancel', 'keep_reading'],
  scanning: ['cancel', 'keep_reading'],
  ready: ['update', 'delete', 'credentials', 'test', 'folders', 'scan', 'preview', 'start', 'cancel', 'keep_reading'],
  copying: ['preview', 'pause', 'cancel', 'retry', 'keep_reading'],
  paused: ['update', 'credentials', 'test', 'folders', 'preview', 'resume', 'cancel', 'retry', 'keep_reading'],
  needs_attention: ['credentials', 'test', 'folders', 'preview', 'resume', 'cancel', 'retry', 'keep_reading'],
  syncing: ['preview', 'cancel', 'retry', 'probe', 'finish', 'keep_reading'],
  completed: ['delete', 'remove_history'],
  cancelled: ['delete', 'remove_history'],
  removing: [],
  removed: ['delete'],
};

/** States in which background work runs for the migration. */
export const WORKING_STATES: ReadonlySet<MigrationState> = new Set(['scanning', 'copying', 'syncing', 'removing']);

/** States that end a migration (its activity log is kept SVC_MIGRATION_AUDIT_DAYS from then). */
export const ENDED_STATES: ReadonlySet<MigrationState> = new Set(['completed', 'cancelled', 'removing', 'removed']);

type Row = Pick<MailboxMigrationsTable, 'state' | 'provider' | 'password_sealed' | 'scanned_version' | 'plan_version'>;

export function isMailboxSource(m: Pick<Row, 'provider'>): boolean {
  return findPreset(m.provider)?.kind !== 'export_file';
}

/** A source the channel's reader can go on reading: an IMAP mailbox (password or Google/Microsoft sign-in). */
export function readsLive(m: Pick<Row, 'provider'>): boolean {
  const kind = findPreset(m.provider)?.kind;
  return kind === 'imap' || kind === 'sign_in';
}

export function allowedActions(m: Row): MigrationAction[] {
  const mailbox = isMailboxSource(m);
  return BY_STATE[m.state].filter((action) => {
    if (action === 'upload') return !mailbox;
    if (action === 'credentials') return mailbox;
    if (action === 'test' || action === 'folders') return mailbox && m.password_sealed !== null;
    if (action === 'probe') return mailbox;
    // Only a mailbox read over IMAP (a password or a sign-in) can be read on live by its channel.
    if (action === 'keep_reading') return readsLive(m);
    if (action === 'start') return m.scanned_version === m.plan_version;
    return true;
  });
}

export function stateError(m: Row, action: MigrationAction, message?: string): AppError {
  return new AppError(409, 'migration_state', message ?? `${action.replace('_', '-')} is not allowed while the migration is ${m.state.replace('_', ' ')}`, {
    state: m.state,
    allowed_actions: allowedActions(m),
  });
}

/** Throws 409 migration_state unless the action is allowed now. */
export function requireAction(m: Row, action: MigrationAction): void {
  if (!allowedActions(m).includes(action)) throw stateError(m, action);
}

/** Leaving needs_attention: back to the state the problem interrupted, the problem and the failure count cleared. */
export function resumedFromAttention(m: MailboxMigrationsTable): Partial<MailboxMigrationsTable> {
  return {
    state: m.resume_state ?? 'copying',
    resume_state: null,
    attention_reason: null,
    attention_message: null,
    attention_retry_at: null,
    connect_failures: 0,
  };
}
