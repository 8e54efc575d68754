// The activity log of one migration.
import { api, must } from '../api';
import { Loading, useLoad } from '../components/Loading';
import type { MessageKey } from '../i18n';
import { absoluteTime, relativeTime, t } from '../i18n';
import { useSourceText } from './model';

export function Activity(props: { id: string; updatedAt: string }) {
  const st = useSourceText();
  const log = useLoad(
    () => must(api.GET('/v1/migrations/{migrationId}/activity', { params: { path: { migrationId: props.id }, query: { limit: 50 } } })),
    [props.id, props.updatedAt],
  );
  return (
    <details class="card mig-activity">
      <summary>{t('mig.activity')}</summary>
      {!log.data ? (
        <Loading error={log.error} retry={log.reload} />
      ) : (
        <ol role="list" class="mig-log">
          {log.data.data.map((e) => {
            const entry = e as { id: string; at: string; action: string; actor: { type: string }; detail: Record<string, unknown> | null };
            return (
              <li key={entry.id}>
                <time class="muted" title={absoluteTime(entry.at)}>
                  {relativeTime(entry.at)}
                </time>{' '}
                {ACTIVITY_KEYS[entry.action] ? st(ACTIVITY_KEYS[entry.action]) : entry.action.replace(/_/g, ' ')}
                <span class="muted">
                  {' '}
                  · {entry.actor.type === 'system' ? t('conv.system') : entry.actor.type === 'api_key' ? t('conv.api') : t('conv.team')}
                </span>
                {entry.detail && typeof entry.detail.message === 'string' && <span class="muted"> · {entry.detail.message}</span>}
              </li>
            );
          })}
        </ol>
      )}
    </details>
  );
}

const ACTIVITY_KEYS: Record<string, MessageKey> = {
  created: 'mig.log.created',
  credentials_set: 'mig.log.credentials_set',
  credentials_replaced: 'mig.log.credentials_set',
  test: 'mig.log.test',
  connected: 'mig.log.connected',
  scan_started: 'mig.log.scan_started',
  scan_finished: 'mig.log.scan_finished',
  copy_started: 'mig.log.copy_started',
  copy_finished: 'mig.log.copy_finished',
  paused: 'mig.log.paused',
  resumed: 'mig.log.resumed',
  cancelled: 'mig.log.cancelled',
  needs_attention: 'mig.log.needs_attention',
  test_message_sent: 'mig.log.test_message_sent',
  test_message_arrived: 'mig.log.test_message_arrived',
  forwarding_confirmation_received: 'mig.log.forwarding_confirmation',
  finished: 'mig.log.finished',
  completed: 'mig.log.completed',
  sync_limit_reached: 'mig.log.sync_limit',
  update: 'mig.log.updated',
  retry: 'mig.log.retry',
  upload_completed: 'mig.log.upload_completed',
  remove_history_started: 'mig.log.remove_history',
  history_removed: 'mig.log.history_removed',
  command_blocked: 'mig.log.command_blocked',
  sign_in_started: 'mig.log.sign_in_started',
  sign_in_failed: 'mig.log.sign_in_failed',
  keep_reading_changed: 'mig.log.keep_reading_changed',
  reading_handed_over: 'mig.log.reading_handed_over',
  reading_handover_skipped: 'mig.log.reading_handover_skipped',
};
