// Step 8, Done: the outcome, and removing the copied history.
import { useContext, useState } from 'preact/hooks';
import { ApiError, api, errorText, must } from '../../api';
import { Confirm } from '../../components/Confirm';
import { FormError } from '../../components/FormError';
import type { MessageKey } from '../../i18n';
import { t } from '../../i18n';
import { type Migration, SourceContext, useSourceText } from '../model';
import { migrationEn } from '../strings/en';

export function DoneStep(props: { m: Migration }) {
  const { m } = props;
  const st = useSourceText();
  // An export file had no password or sign-in to delete.
  // An export file had no password or sign-in to delete; one handed to the channel is still in use (said by HandOverSummary).
  const ap = useContext(SourceContext).kind === 'export_file' || m.keep_reading?.result === 'handed_over' ? null : m.app_password;
  const removal = m.remove_history;
  return (
    <section class="card" aria-labelledby="mig-done-title">
      <h2 id="mig-done-title" style={{ marginTop: 0 }}>
        {t(
          m.state === 'completed'
            ? 'mig.done.completed'
            : m.state === 'cancelled'
              ? 'mig.done.cancelled'
              : m.state === 'removing'
                ? 'mig.done.removing'
                : 'mig.done.removed',
        )}
      </h2>
      {m.end_reason && <p class="muted">{t(`mig.end.${m.end_reason}` as MessageKey)}</p>}
      <p>{t('mig.done.copied', { copied: m.progress.copied, conversations: m.progress.conversations })}</p>
      <HandOverSummary m={m} />
      {ap && (
        <div class="notice" data-testid="app-password">
          <p style={{ marginTop: 0 }}>{st('mig.done.password_deleted')}</p>
          <p>{st('mig.done.revoke')}</p>
          {ap.remove_at_provider && (
            <p>
              <a href={ap.remove_at_provider} target="_blank" rel="noopener noreferrer">
                {st('mig.done.revoke_link')}
              </a>
            </p>
          )}
        </div>
      )}
      {m.state === 'removing' && <p role="status">{t('mig.done.removing_lead')}</p>}
      {m.state === 'removed' && removal && (
        <p role="status" data-testid="removed">
          {st('mig.done.removed_lead', { conversations: Number(removal.conversations_deleted ?? 0), contacts: Number(removal.contacts_deleted ?? 0) })}
        </p>
      )}
      {m.allowed_actions.includes('remove_history') && removal?.confirm_count != null && (
        <p class="muted">{t('mig.remove.explain', { n: removal.confirm_count })}</p>
      )}
    </section>
  );
}

/** What the completion did with "keep reading": the channel reads the mailbox now (with a link to its reading card), or why not. */
function HandOverSummary(props: { m: Migration }) {
  const k = props.m.keep_reading;
  if (!k?.result) return null;
  const channel = k.channel_name ?? '';
  if (k.result !== 'handed_over') {
    const reason = `mig.keep.reason.${k.result}`;
    return (
      <p class="notice" data-testid="reading-handover">
        {t('mig.keep.skipped', { channel, reason: reason in migrationEn ? t(reason as MessageKey) : k.result })}
      </p>
    );
  }
  return (
    <div class="notice" role="status" data-testid="reading-handover">
      <p style={{ marginTop: 0 }}>{t('mig.keep.handed_over', { channel })}</p>
      <p>{t('mig.keep.keep_password')}</p>
      {k.channel_inbox_id && k.channel_id && (
        <p>
          <a href={`/settings/inboxes/${k.channel_inbox_id}#reading-${k.channel_id}`}>{t('mig.keep.reading_link')}</a>
        </p>
      )}
    </div>
  );
}

export function RemoveHistoryDialog(props: { m: Migration; onClose: () => void; onRemoved: (m: Migration) => void }) {
  const st = useSourceText();
  const count = props.m.remove_history?.confirm_count ?? 0;
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <Confirm title={t('mig.action.remove_history')} lead={st('mig.remove.lead', { n: count })} onClose={props.onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setError(null);
          try {
            const next = await must(
              api.POST('/v1/migrations/{migrationId}/remove-history', {
                params: { path: { migrationId: props.m.id } },
                body: { confirm_count: Number(text.trim()) },
              }),
            );
            props.onRemoved(next as Migration);
            props.onClose();
          } catch (err) {
            setError(err instanceof ApiError && err.code === 'confirm_count_mismatch' ? t('mig.remove.mismatch') : errorText(err));
          } finally {
            setBusy(false);
          }
        }}
      >
        <div class="field">
          <label for="mig-remove-count">{t('mig.remove.type', { n: count })}</label>
          <input id="mig-remove-count" class="input" inputMode="numeric" autoComplete="off" value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </div>
        <FormError error={error} />
        <button class="btn btn-primary btn-danger-fill" type="submit" disabled={busy || !/^\d+$/.test(text.trim())}>
          {t('mig.action.remove_history')}
        </button>
      </form>
    </Confirm>
  );
}
