// An inbox's automatic mail to customers (on its settings page): the greeting that answers the
// first mail of a new conversation (en and tr texts), and the satisfaction rating request sent
// when a member closes a conversation.
import { useState } from 'preact/hooks';
import { api, errorText, must } from '../../api';
import { Loading, useLoad } from '../../components/Loading';
import { t } from '../../i18n';
import { toast } from '../../state';

const fail = (e: unknown) => toast(t('action.failed', { error: errorText(e) }));

export function GreetingCard(props: { inboxId: string }) {
  const { inboxId } = props;
  const { data, error, reload } = useLoad(() => must(api.GET('/v1/inboxes/{inboxId}/greeting', { params: { path: { inboxId } } })), [inboxId]);
  return (
    <section class="card" aria-labelledby="greeting-title">
      <h2 id="greeting-title" style={{ marginTop: 0 }}>
        {t('greeting.title')}
      </h2>
      <p class="muted">{t('greeting.lead')}</p>
      {!data ? <Loading error={error} retry={reload} /> : <GreetingForm inboxId={inboxId} saved={data} onSaved={reload} />}
    </section>
  );
}

interface Greeting {
  enabled: boolean;
  text: { en: string; tr: string };
  held: 'migration_underway' | 'no_outgoing_mail' | null;
}

// Mounted only once the saved greeting is known, so its first render already shows it (a click
// can never land on a default that the loaded value then overwrites).
function GreetingForm(props: { inboxId: string; saved: Greeting; onSaved: () => unknown }) {
  const { inboxId, saved } = props;
  const [enabled, setEnabled] = useState(saved.enabled);
  const [en, setEn] = useState(saved.text.en);
  const [tr, setTr] = useState(saved.text.tr);
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        try {
          await must(api.PATCH('/v1/inboxes/{inboxId}/greeting', { params: { path: { inboxId } }, body: { enabled, text: { en, tr } } }));
          toast(t('settings.saved'));
          void props.onSaved();
        } catch (err) {
          fail(err);
        }
      }}
    >
      <label class="field" style={{ display: 'flex', gap: 'var(--space-2)', fontWeight: 400 }}>
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />
        {t('greeting.enabled')}
      </label>
      {enabled && saved.held && (
        <p class="notice notice-warn" role="status">
          {t(saved.held === 'migration_underway' ? 'greeting.held_migration' : 'greeting.held_no_smtp')}
        </p>
      )}
      <div class="field">
        <label for="greeting-en">{t('greeting.text_en')}</label>
        <textarea id="greeting-en" class="input" rows={3} required maxLength={5000} value={en} onInput={(e) => setEn(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for="greeting-tr">{t('greeting.text_tr')}</label>
        <textarea id="greeting-tr" class="input" rows={3} required maxLength={5000} value={tr} onInput={(e) => setTr(e.currentTarget.value)} />
      </div>
      <p class="muted" style={{ fontSize: 'var(--text-sm)' }}>
        {t('greeting.never')}
      </p>
      <button class="btn btn-primary" type="submit">
        {t('settings.save')}
      </button>
    </form>
  );
}

export function RatingsCard(props: { inboxId: string }) {
  const { inboxId } = props;
  const { data, error, reload } = useLoad(() => must(api.GET('/v1/inboxes/{inboxId}/ratings', { params: { path: { inboxId } } })), [inboxId]);
  return (
    <section class="card" aria-labelledby="ratings-title">
      <h2 id="ratings-title" style={{ marginTop: 0 }}>
        {t('ratings.title')}
      </h2>
      <p class="muted">{t('ratings.lead')}</p>
      {!data ? (
        <Loading error={error} retry={reload} />
      ) : (
        <label class="field check-row">
          <input
            type="checkbox"
            checked={data.enabled}
            onChange={async (e) => {
              try {
                await must(api.PATCH('/v1/inboxes/{inboxId}/ratings', { params: { path: { inboxId } }, body: { enabled: e.currentTarget.checked } }));
                toast(t('settings.saved'));
              } catch (err) {
                fail(err);
              }
              void reload();
            }}
          />
          {t('ratings.enabled')}
        </label>
      )}
    </section>
  );
}
