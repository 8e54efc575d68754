// Settings → inboxes and their channels: the list, an inbox's details and deletion; its e-mail
// channels (SMTP with a connection test, forwarding address) and chat widgets are in Channels.tsx.
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, type BodyOf, errorText, type Inbox, must } from '../../api';
import { Confirm } from '../../components/Confirm';
import { LoadedList } from '../../components/DataTable';
import { useLoad } from '../../components/Loading';
import { t } from '../../i18n';
import { loadInboxes, toast } from '../../state';
import { BusinessHoursCard } from '../business-hours';
import { InboxSignatureCard } from '../saved-replies';
import { SlaCard } from '../sla';
import { type Channel, ChatChannel, EmailChannel, NewChannel } from './Channels';
import { AwayReplyCard, GreetingCard, RatingsCard } from './CustomerReplySettings';

type InboxPatch = BodyOf<'/v1/inboxes/{inboxId}', 'patch'>;

const fail = (e: unknown) => toast(t('action.failed', { error: errorText(e) }));

export function InboxList() {
  const list = useLoad(() => must(api.GET('/v1/inboxes')));
  const [name, setName] = useState('');
  const { route } = useLocation();
  return (
    <>
      <h1>{t('settings.inboxes')}</h1>
      <p class="lead">{t('inboxes.lead')}</p>
      <LoadedList rows={list.data?.data} error={list.error} retry={list.reload} empty={t('inboxes.empty')}>
        {(rows) => (
          <ul role="list" style={{ listStyle: 'none', padding: 0 }}>
            {rows.map((i) => (
              <li key={i.id} class="card">
                <a href={`/settings/inboxes/${i.id}`}>{i.name}</a> <span class="muted mono">{i.slug}</span>
              </li>
            ))}
          </ul>
        )}
      </LoadedList>
      <form
        class="card"
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            const inbox = await must(api.POST('/v1/inboxes', { body: { name } }));
            await loadInboxes();
            route(`/settings/inboxes/${inbox.id}`);
          } catch (err) {
            fail(err);
          }
        }}
      >
        <h2 style={{ marginTop: 0 }}>{t('inboxes.new')}</h2>
        <div class="field">
          <label for="new-inbox">{t('inboxes.name')}</label>
          <input id="new-inbox" class="input" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
        <button class="btn btn-primary" type="submit">
          {t('settings.create')}
        </button>
      </form>
    </>
  );
}

const ZONES: string[] = (Intl as unknown as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.('timeZone') ?? ['UTC'];

export function InboxDetail(props: { id: string }) {
  const { route } = useLocation();
  const [inbox, setInbox] = useState<Inbox | null>(null);
  const [draft, setDraft] = useState<InboxPatch>({});
  const [channels, setChannels] = useState<Channel[]>([]);
  const [deleting, setDeleting] = useState(false);
  const [hoursSaved, setHoursSaved] = useState(0);
  const load = async () => {
    const [i, c] = await Promise.all([
      must(api.GET('/v1/inboxes/{inboxId}', { params: { path: { inboxId: props.id } } })),
      must(api.GET('/v1/channels', { params: { query: { inbox_id: props.id } } })),
    ]);
    setInbox(i);
    setDraft({ name: i.name, slug: i.slug, locale: i.locale, timezone: i.timezone, mode: i.mode, expected_reply_minutes: i.expected_reply_minutes });
    setChannels(c.data);
  };
  useEffect(() => void load().catch(fail), [props.id]);
  if (!inbox) return <div class="skeleton" style={{ width: '60%' }} />;
  const set = (patch: InboxPatch) => setDraft({ ...draft, ...patch });
  return (
    <>
      <p>
        <a href="/settings/inboxes">← {t('settings.inboxes')}</a>
      </p>
      <h1>{inbox.name}</h1>
      <form
        class="card"
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            setInbox(await must(api.PATCH('/v1/inboxes/{inboxId}', { params: { path: { inboxId: inbox.id } }, body: draft })));
            await loadInboxes();
            toast(t('settings.saved'));
          } catch (err) {
            fail(err);
          }
        }}
      >
        <div class="field">
          <label for="inbox-name">{t('inboxes.name')}</label>
          <input id="inbox-name" class="input" required maxLength={200} value={draft.name} onInput={(e) => set({ name: e.currentTarget.value })} />
        </div>
        <div class="field">
          <label for="inbox-slug">{t('inboxes.slug')}</label>
          <input id="inbox-slug" class="input mono" required maxLength={64} value={draft.slug} onInput={(e) => set({ slug: e.currentTarget.value })} />
        </div>
        <div class="field">
          <label for="inbox-locale">{t('inboxes.locale')}</label>
          <select id="inbox-locale" class="select" value={draft.locale} onChange={(e) => set({ locale: e.currentTarget.value })}>
            <option value="en">English</option>
            <option value="tr">Türkçe</option>
          </select>
        </div>
        <div class="field">
          <label for="inbox-tz">{t('inboxes.timezone')}</label>
          <input id="inbox-tz" class="input" list="zones" value={draft.timezone} onInput={(e) => set({ timezone: e.currentTarget.value })} />
          <datalist id="zones">
            {ZONES.map((z) => (
              <option key={z} value={z} />
            ))}
          </datalist>
        </div>
        <fieldset class="field" style={{ border: 0, padding: 0 }}>
          <legend style={{ fontWeight: 600, fontSize: 'var(--text-sm)' }}>{t('inboxes.mode')}</legend>
          {(['live', 'async'] as const).map((m) => (
            <label key={m} style={{ display: 'flex', gap: 'var(--space-2)', fontWeight: 400 }}>
              <input type="radio" name="mode" checked={draft.mode === m} onChange={() => set({ mode: m })} />
              {t(m === 'live' ? 'inboxes.mode_live' : 'inboxes.mode_async')}
            </label>
          ))}
        </fieldset>
        <div class="field">
          <label for="inbox-minutes">{t('inboxes.reply_minutes')}</label>
          <input
            id="inbox-minutes"
            class="input"
            type="number"
            min={1}
            inputMode="numeric"
            value={draft.expected_reply_minutes ?? ''}
            onInput={(e) => set({ expected_reply_minutes: e.currentTarget.value ? Number(e.currentTarget.value) : null })}
            style={{ maxWidth: '160px' }}
          />
        </div>
        <button class="btn btn-primary" type="submit">
          {t('settings.save')}
        </button>
      </form>
      <InboxSignatureCard inboxId={inbox.id} />
      <BusinessHoursCard inboxId={inbox.id} onSaved={() => setHoursSaved((n) => n + 1)} />
      <AwayReplyCard key={hoursSaved} inboxId={inbox.id} />
      <SlaCard inboxId={inbox.id} />
      <GreetingCard inboxId={inbox.id} />
      <RatingsCard inboxId={inbox.id} />

      <h2>{t('channels.title')}</h2>
      {channels.length === 0 && <p class="empty">{t('channels.none')}</p>}
      {channels.map((c) =>
        c.kind === 'email' ? (
          <EmailChannel key={c.id} channel={c} onChanged={() => void load()} />
        ) : (
          <ChatChannel key={c.id} channel={c} onChanged={() => void load()} />
        ),
      )}
      <NewChannel inboxId={inbox.id} onCreated={() => void load()} />

      <section class="card danger-zone" aria-labelledby="inbox-delete">
        <h2 id="inbox-delete" style={{ marginTop: 0 }}>
          {t('inboxes.delete')}
        </h2>
        <p>{t('inboxes.delete_lead', { name: inbox.name })}</p>
        <button class="btn btn-danger" type="button" onClick={() => setDeleting(true)}>
          {t('inboxes.delete')}
        </button>
      </section>
      {deleting && (
        <Confirm
          title={t('inboxes.delete')}
          lead={t('inboxes.delete_lead', { name: inbox.name })}
          action={t('inboxes.delete')}
          typed={{ label: t('inboxes.delete_confirm', { name: inbox.name }), value: inbox.name }}
          onClose={() => setDeleting(false)}
          onConfirm={async () => {
            try {
              await must(api.DELETE('/v1/inboxes/{inboxId}', { params: { path: { inboxId: inbox.id } } }));
              await loadInboxes();
              toast(t('inboxes.deleted'));
              route('/settings/inboxes');
            } catch (err) {
              fail(err);
            }
          }}
        />
      )}
    </>
  );
}
