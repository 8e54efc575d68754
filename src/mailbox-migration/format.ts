// What the API and the realtime events show of a migration. The password or sign-in grant (sealed)
// never leaves through here: only whether one is set.

import { imapServerOf } from './sources/connect.js';
import { findPreset } from './sources/presets.js';
import { allowedActions } from './states.js';
import type { MigrationRow, Progress } from './store.js';

export const READ_ONLY_STATEMENT =
  'No change was made to the old mailbox: folders are opened read-only (EXAMINE), messages are read without marking them (BODY.PEEK), and every command is checked before it is sent; anything else closes the connection unsent.';

export function formatMigration(m: MigrationRow, progress: Progress) {
  const preset = findPreset(m.provider);
  const server = imapServerOf(m);
  return {
    id: m.id,
    state: m.state,
    allowed_actions: allowedActions(m),
    provider: m.provider,
    provider_name: preset?.name ?? m.provider,
    source_address: m.source_address,
    imap: server ? { host: server.host, port: server.port, tls: server.tls } : null,
    username: m.username,
    credentials: { set: m.password_sealed !== null, set_at: m.password_sealed !== null ? m.credentials_set_at : null },
    inbox_id: m.inbox_id,
    channel_id: m.channel_id,
    folders: m.folders ? (JSON.parse(m.folders) as string[]) : null,
    date_from: m.date_from,
    date_to: m.date_to,
    folder_labels: JSON.parse(m.folder_labels) as Record<string, string | null>,
    team_members: JSON.parse(m.team_members) as Record<string, string | null>,
    close_after_days: m.close_after_days,
    skip_automatic: m.skip_automatic === 1,
    keep_originals: m.keep_originals === 1,
    plan: {
      current: m.scanned_version !== null && m.scanned_version === m.plan_version,
      summary: m.summary ? (JSON.parse(m.summary) as Record<string, unknown>) : null,
    },
    progress,
    read_only: {
      changes_made_to_provider: 0 as const,
      blocked_commands: m.blocked_commands,
      statement: READ_ONLY_STATEMENT,
    },
    attention: m.state === 'needs_attention' ? { reason: m.attention_reason, message: m.attention_message, retry_at: m.attention_retry_at } : null,
    app_password:
      m.state === 'completed' || m.state === 'cancelled'
        ? {
            deleted_here: m.password_sealed === null,
            remove_at_provider: preset?.app_password_url ?? null,
            message:
              m.reading_handover === 'handed_over'
                ? 'The password or sign-in moved to the channel, which reads the mailbox live with it: keep it at the provider while the channel reads the mailbox.'
                : preset?.kind === 'sign_in'
                  ? `The sign-in was deleted from this server. To end this server's access at ${preset.id === 'google' ? 'Google' : 'Microsoft'} as well, remove it in your account's app permissions.`
                  : 'The password was deleted from this server. This server cannot revoke an app password at the provider: remove it there if you made one for this migration.',
          }
        : null,
    copy_started_at: m.copy_started_at,
    copy_ended_at: m.copy_ended_at,
    ended_at: m.ended_at,
    created_at: m.created_at,
    updated_at: m.updated_at,
  };
}
