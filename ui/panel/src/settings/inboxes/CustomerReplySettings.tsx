// An inbox's automatic mail to customers (on its settings page): the greeting that answers the
// first mail of a new conversation, the out-of-office reply to mail outside business hours (each
// with en and tr texts), and the satisfaction rating request sent when a member closes a
// conversation.
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
      {!data ? (
        <Loading error={error} retry={reload} />
      ) : (
        <AnswerForm
          idPrefix="greeting"
          saved={data}
          labels={{ enabled: t('greeting.enabled'), never: t('greeting.never') }}
          save={(body) => must(api.PATCH('/v1/inboxes/{inboxId}/greeting', { params: { path: { inboxId } }, body }))}
          onSaved={reload}
        />
      )}
    </section>
  );
}

/** The out-of-office reply; the page remounts it when the business hours are saved (its "held" may change). */
export function AwayReplyCard(props: { inboxId: string }) {
  const { inboxId } = props;
  const { data, error, reload } = useLoad(() => must(api.GET('/v1/inboxes/{inboxId}/away-reply', { params: { path: { inboxId } } })), [inboxId]);
  return (
    <section class="card" aria-labelledby="away-title">
      <h2 id="away-title" style={{ marginTop: 0 }}>
        {t('away.title')}
      </h2>
      <p class="muted">{t('away.lead')}</p>
      {!data ? (
        <Loading error={error} retry={reload} />
      ) : (
        <AnswerForm
          idPrefix="away"
          saved={data}
          labels={{ enabled: t('away.enabled'), never: t('away.never'), hint: t('away.placeholder_hint') }}
          save={(body) => must(api.PATCH('/v1/inboxes/{inboxId}/away-reply', { params: { path: { inboxId } }, body }))}
          onSaved={reload}
        />
      )}
    </section>
  );
}

interface AnswerSettings {
  enabled: boolean;
  text: { en: string; tr: string };
  held: 'migration_underway' | 'no_outgoing_mail' | 'no_schedule' | null;
}

const HELD_TEXT = { migration_underway: 'greeting.held_migration', no_outgoing_mail: 'greeting.held_no_smtp', no_schedule: 'away.held_no_schedule' } as const;

// Mounted only once the saved settings are known, so its first render already shows them (a click
// can never land on a default that the loaded value then overwrites).
function AnswerForm(props: {
  idPrefix: string;
  saved: AnswerSettings;
  labels: { enabled: string; never: string; hint?: string };
  save: (body: { enabled: boolean; text: { en: string; tr: string } }) => Promise<unknown>;
  onSaved: () => unknown;
}) {
  const { idPrefix, saved, labels } = props;
  const [enabled, setEnabled] = useState(saved.enabled);
  const [en, setEn] = useState(saved.text.en);
  const [tr, setTr] = useState(saved.text.tr);
  const hintId = labels.hint ? `${idPrefix}-hint` : undefined;
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        try {
          await props.save({ enabled, text: { en, tr } });
          toast(t('settings.saved'));
          void props.onSaved();
        } catch (err) {
          fail(err);
        }
      }}
    >
      <label class="field check-row">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />
        {labels.enabled}
      </label>
      {enabled && saved.held && (
        <p class="notice notice-warn" role="status">
          {t(HELD_TEXT[saved.held])}
        </p>
      )}
      <div class="field">
        <label for={`${idPrefix}-en`}>{t('greeting.text_en')}</label>
        <textarea
          id={`${idPrefix}-en`}
          class="input"
          rows={3}
          required
          maxLength={5000}
          aria-describedby={hintId}
          value={en}
          onInput={(e) => setEn(e.currentTarget.value)}
        />
      </div>
      <div class="field">
        <label for={`${idPrefix}-tr`}>{t('greeting.text_tr')}</label>
        <textarea
          id={`${idPrefix}-tr`}
          class="input"
          rows={3}
          required
          maxLength={5000}
          aria-describedby={hintId}
          value={tr}
          onInput={(e) => setTr(e.currentTarget.value)}
        />
      </div>
      {labels.hint && (
        <p id={hintId} class="muted" style={{ fontSize: 'var(--text-sm)' }}>
          {labels.hint}
        </p>
      )}
      <p class="muted" style={{ fontSize: 'var(--text-sm)' }}>
        {labels.never}
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
