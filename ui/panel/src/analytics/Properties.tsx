// The websites counted (owners and admins): add one (domain, name, subdomains, the chat widget on
// it), its snippet, delete it; and the month's usage against the workspace's limit as a banner.
import { useState } from 'preact/hooks';
import { api, errorText, must, type Schemas } from '../api';
import { Confirm } from '../components/Confirm';
import { useLoad } from '../components/Loading';
import { locale, t } from '../i18n';
import { toast } from '../state';

type Property = Schemas['AnalyticsProperty'];

export function UsageBanner() {
  const { data } = useLoad(() => must(api.GET('/v1/analytics/usage')));
  if (!data) return null;
  const n = (x: number) => x.toLocaleString(locale.value);
  const line = data.limit
    ? t('analytics.usage', { events: n(data.events), limit: n(data.limit), percent: data.percent })
    : t('analytics.usage_unlimited', { events: n(data.events) });
  if (data.state === 'ok') return <p class="muted">{line}</p>;
  return (
    <div class="notice notice-warn" role="status" data-testid="analytics-usage">
      <p style={{ margin: 0 }}>{data.state === 'over' ? t('analytics.usage_over') : t('analytics.usage_warning', { percent: data.percent })}</p>
      <p style={{ margin: 0 }}>{line}</p>
    </div>
  );
}

export function Properties(props: { properties: Property[]; onChanged: () => void }) {
  const channels = useLoad(() => must(api.GET('/v1/channels')));
  const chats = (channels.data?.data ?? []).filter((c) => c.kind === 'chat');
  const [domain, setDomain] = useState('');
  const [name, setName] = useState('');
  const [subdomains, setSubdomains] = useState(false);
  const [channel, setChannel] = useState('');
  const [error, setError] = useState('');
  const [deleting, setDeleting] = useState<Property | null>(null);
  const origin = location.origin;

  async function add(e: Event) {
    e.preventDefault();
    setError('');
    try {
      await must(
        api.POST('/v1/analytics/properties', {
          body: { domain, ...(name.trim() ? { name } : {}), subdomains, chat_channel_id: channel || null },
        }),
      );
      setDomain('');
      setName('');
      setSubdomains(false);
      setChannel('');
      toast(t('analytics.created'));
      props.onChanged();
    } catch (err) {
      setError(errorText(err));
    }
  }

  return (
    <section class="card analytics-properties" aria-labelledby="analytics-properties-title">
      <h2 id="analytics-properties-title" style={{ marginTop: 0 }}>
        {t('analytics.properties')}
      </h2>
      <ul role="list" class="analytics-property-list">
        {props.properties.map((p) => (
          <li key={p.id}>
            <p style={{ margin: 0 }}>
              <strong>{p.domain}</strong>
              {p.name !== p.domain && <span class="muted"> · {p.name}</span>}
              {p.chat_channel_id && <span class="muted"> · {chats.find((c) => c.id === p.chat_channel_id)?.name ?? p.chat_channel_id}</span>}
            </p>
            {!p.chat_channel_id && (
              <>
                <p class="muted" style={{ margin: 'var(--space-1) 0' }}>
                  {t('analytics.snippet')}
                </p>
                <code class="analytics-snippet">{`<script defer src="${origin}/a.js" data-domain="${p.domain}"></script>`}</code>
              </>
            )}
            <button class="btn btn-danger" type="button" onClick={() => setDeleting(p)}>
              {t('analytics.delete')}
            </button>
          </li>
        ))}
      </ul>
      <form onSubmit={add} class="analytics-add">
        <h3>{t('analytics.add_property')}</h3>
        <div class="field">
          <label for="property-domain">{t('analytics.domain')}</label>
          <input
            id="property-domain"
            class="input"
            required
            maxLength={253}
            placeholder="example.com"
            value={domain}
            onInput={(e) => setDomain(e.currentTarget.value)}
            aria-invalid={error ? 'true' : undefined}
            aria-describedby={error ? 'property-error' : undefined}
          />
        </div>
        <div class="field">
          <label for="property-name">{t('analytics.name')}</label>
          <input id="property-name" class="input" maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="property-channel">{t('analytics.chat_channel')}</label>
          <select id="property-channel" class="select" value={channel} onChange={(e) => setChannel(e.currentTarget.value)}>
            <option value="">{t('analytics.no_channel')}</option>
            {chats.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
        </div>
        <label class="field check-row">
          <input type="checkbox" checked={subdomains} onChange={(e) => setSubdomains(e.currentTarget.checked)} /> {t('analytics.subdomains')}
        </label>
        {error && (
          <p id="property-error" class="error-text" role="alert">
            {error}
          </p>
        )}
        <button class="btn btn-primary" type="submit">
          {t('analytics.add_property')}
        </button>
      </form>
      {deleting && (
        <Confirm
          title={t('analytics.delete')}
          lead={t('analytics.delete_lead', { domain: deleting.domain })}
          action={t('analytics.delete')}
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            try {
              await must(api.DELETE('/v1/analytics/properties/{propertyId}', { params: { path: { propertyId: deleting.id } } }));
              toast(t('analytics.deleted'));
              setDeleting(null);
              props.onChanged();
            } catch (err) {
              toast(t('action.failed', { error: errorText(err) }));
            }
          }}
        />
      )}
    </section>
  );
}
