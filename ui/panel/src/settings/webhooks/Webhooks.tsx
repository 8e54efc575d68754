// Settings › Webhooks: endpoints, the events they get, and each one's deliveries.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, api, type BodyOf, errorText, must } from '../../api';
import { Confirm } from '../../components/Confirm';
import { DataTable, LoadedList } from '../../components/DataTable';
import { FormError } from '../../components/FormError';
import { InboxOptions } from '../../components/InboxOptions';
import { Loading, useLoad } from '../../components/Loading';
import { SecretOnce } from '../../components/Secret';
import { absoluteTime, relativeTime, t } from '../../i18n';
import { toast } from '../../state';

type EventType = NonNullable<BodyOf<'/v1/webhooks', 'post'>['events']>[number];
const EVENTS: EventType[] = ['conversation.created', 'conversation.updated', 'message.created', 'feedback.created', 'contact.updated', 'contact.deleted'];

export function Webhooks() {
  const { data, error, reload } = useLoad(() => must(api.GET('/v1/webhooks', { params: { query: { limit: 200 } } })));
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<EventType[]>([]);
  const [inbox, setInbox] = useState('');
  const [notes, setNotes] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);
  const [formError, setFormError] = useState<string | null>(null);
  async function create(e: Event) {
    e.preventDefault();
    setFormError(null);
    try {
      const w = await must(api.POST('/v1/webhooks', { body: { url, ...(events.length ? { events } : {}), inbox_id: inbox || null, include_notes: notes } }));
      setSecret(w.secret);
      setUrl('');
      setEvents([]);
      void reload();
    } catch (err) {
      setFormError(errorText(err));
    }
  }
  return (
    <>
      <h1>{t('settings.webhooks')}</h1>
      <p class="lead">{t('webhooks.lead')}</p>
      {secret && <SecretOnce label={t('webhooks.created')} value={secret} />}
      <form class="card" onSubmit={create}>
        <h2 style={{ marginTop: 0 }}>{t('webhooks.new')}</h2>
        <div class="field">
          <label for="wh-url">{t('webhooks.url')}</label>
          <input
            id="wh-url"
            class="input"
            type="url"
            required
            placeholder="https://example.com/hooks/svc"
            value={url}
            aria-describedby="wh-url-hint"
            onInput={(e) => setUrl(e.currentTarget.value)}
          />
          <span class="hint" id="wh-url-hint">
            {t('webhooks.url_hint')}
          </span>
        </div>
        <fieldset class="field" style={{ border: 0, padding: 0 }}>
          <legend style={{ fontWeight: 600, fontSize: 'var(--text-sm)' }}>{t('webhooks.events')}</legend>
          <span class="hint">{t('webhooks.events_hint')}</span>
          <div class="checks">
            {EVENTS.map((ev) => (
              <label key={ev}>
                <input
                  type="checkbox"
                  checked={events.includes(ev)}
                  onChange={() => setEvents(events.includes(ev) ? events.filter((x) => x !== ev) : [...events, ev])}
                />
                <span class="mono">{ev}</span>
              </label>
            ))}
          </div>
        </fieldset>
        <div class="field">
          <label for="wh-inbox">{t('webhooks.inbox')}</label>
          <select id="wh-inbox" class="select" value={inbox} onChange={(e) => setInbox(e.currentTarget.value)}>
            <option value="">{t('webhooks.any_inbox')}</option>
            <InboxOptions />
          </select>
        </div>
        <label class="field" style={{ flexDirection: 'row', gap: 'var(--space-2)', alignItems: 'center', fontWeight: 400 }}>
          <input type="checkbox" checked={notes} onChange={() => setNotes(!notes)} />
          {t('webhooks.include_notes')}
        </label>
        <FormError error={formError} />
        <button class="btn btn-primary" type="submit">
          {t('settings.create')}
        </button>
      </form>
      <LoadedList rows={data?.data} error={error} retry={reload} empty={t('webhooks.empty')}>
        {(hooks) => (
          <ul role="list" style={{ listStyle: 'none', padding: 0 }}>
            {hooks.map((w) => (
              <li key={w.id} class="card">
                <a href={`/settings/webhooks/${w.id}`} class="mono">
                  {w.url}
                </a>
                <div class={w.enabled ? 'pill-ok' : 'pill-bad'}>
                  {w.enabled ? t('webhooks.enabled') : t('webhooks.disabled', { reason: w.disabled_reason ?? '' })}
                </div>
              </li>
            ))}
          </ul>
        )}
      </LoadedList>
    </>
  );
}

export function WebhookDetail(props: { id: string }) {
  const { route } = useLocation();
  const path = { webhookId: props.id };
  const hook = useLoad(() => must(api.GET('/v1/webhooks/{webhookId}', { params: { path } })), [props.id]);
  const log = useLoad(() => must(api.GET('/v1/webhooks/{webhookId}/deliveries', { params: { path } })), [props.id]);
  const [secret, setSecret] = useState<string | null>(null);
  const [deleting, setDeleting] = useState(false);
  const w = hook.data;
  if (!w) return <Loading error={hook.error} retry={hook.reload} />;
  const act = async (fn: () => Promise<unknown>) => {
    try {
      await fn();
      void hook.reload();
      void log.reload();
    } catch (err) {
      toast(t('action.failed', { error: err instanceof ApiError ? err.message : errorText(err) }));
    }
  };
  return (
    <>
      <p>
        <a href="/settings/webhooks">← {t('settings.webhooks')}</a>
      </p>
      <h1 class="mono" style={{ fontSize: 'var(--text-lg)' }}>
        {w.url}
      </h1>
      <p class={w.enabled ? 'pill-ok' : 'pill-bad'}>
        {w.enabled ? t('webhooks.enabled') : t('webhooks.disabled', { reason: w.disabled_reason ?? '' })}
        {w.failing_since && <span class="muted"> · {t('webhooks.failing_since', { when: absoluteTime(w.failing_since) })}</span>}
      </p>
      <p class="mono muted">{(w.events ?? []).join(', ')}</p>
      {secret && <SecretOnce label={t('webhooks.rotated')} value={secret} />}
      <div class="row-actions">
        {!w.enabled && (
          <button class="btn btn-primary" type="button" onClick={() => void act(() => must(api.POST('/v1/webhooks/{webhookId}/enable', { params: { path } })))}>
            {t('webhooks.enable')}
          </button>
        )}
        <button
          class="btn"
          type="button"
          onClick={() => void act(async () => setSecret((await must(api.POST('/v1/webhooks/{webhookId}/secret', { params: { path } }))).secret))}
        >
          {t('webhooks.rotate')}
        </button>
        <button class="btn btn-danger" type="button" onClick={() => setDeleting(true)}>
          {t('webhooks.delete')}
        </button>
      </div>
      <h2>{t('webhooks.deliveries')}</h2>
      <LoadedList rows={log.data?.data} error={log.error} retry={log.reload} empty={t('webhooks.no_deliveries')}>
        {(attempts) => (
          <DataTable
            label={t('webhooks.deliveries')}
            columns={[t('webhooks.when'), t('webhooks.event'), t('webhooks.result'), t('webhooks.answer'), { hidden: t('webhooks.redeliver') }]}
          >
            {attempts.map((a) => (
              <tr key={a.id}>
                <td>
                  <time title={absoluteTime(a.started_at)}>{relativeTime(a.started_at)}</time>
                  {a.latency_ms != null && <div class="muted">{t('webhooks.latency', { ms: a.latency_ms })}</div>}
                </td>
                <td class="mono">{a.event_type ?? a.event_id}</td>
                <td class={a.status === 'succeeded' ? 'pill-ok' : 'pill-bad'}>
                  {a.status_code ?? a.status}
                  {a.error && <div class="muted">{a.error}</div>}
                </td>
                <td class="mono">{a.response ?? ''}</td>
                <td>
                  <button
                    class="btn"
                    type="button"
                    onClick={() =>
                      void act(async () => {
                        await must(
                          api.POST('/v1/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver', {
                            params: { path: { webhookId: props.id, deliveryId: a.delivery_id } },
                          }),
                        );
                        toast(t('webhooks.redelivered'));
                      })
                    }
                  >
                    {t('webhooks.redeliver')}
                  </button>
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </LoadedList>
      {deleting && (
        <Confirm
          title={t('webhooks.delete')}
          lead={t('webhooks.delete_confirm', { url: w.url })}
          action={t('webhooks.delete')}
          onClose={() => setDeleting(false)}
          onConfirm={() =>
            act(async () => {
              await must(api.DELETE('/v1/webhooks/{webhookId}', { params: { path } }));
              route('/settings/webhooks');
            })
          }
        />
      )}
    </>
  );
}
