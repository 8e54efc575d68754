// Settings › Move to the service: the migrations list and the eight-step wizard (Source, Connect,
// Choose, Map, Review, Copy, Switch, Done) for owners and admins. The step shown follows the
// migration's state; `?step=` opens an earlier step while its action is allowed. Every state's
// screen offers exactly the migration's allowed_actions (the action bar), and live changes come
// from realtime (migration.progress, migration.updated, migration.forwarding_confirmation).
import { createContext } from 'preact';
import { useContext, useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, api, errorText, must, type Schemas } from '../api';
import { Confirm } from '../components/Confirm';
import { DataTable, LoadedList } from '../components/DataTable';
import { HelpDeskCredentialsForm } from '../components/HelpDeskCredentialsForm';
import { Loading, useLoad } from '../components/Loading';
import { type ConnectionTestResult, ConnectionTestSteps, MigrationPasswordForm, RateLimited, runConnectionTest } from '../components/MigrationPasswordForm';
import { MigrationSignIn, SignInNotConfigured, SignInOutcome } from '../components/MigrationSignIn';
import { formatBytes, MigrationUpload } from '../components/MigrationUpload';
import { CopyField } from '../components/Secret';
import { absoluteTime, relativeTime, t } from '../i18n';
import type { MessageKey } from '../locales/en';
import { migrationEn } from '../locales/migration.en';
import { connectRealtime, onEvent } from '../realtime';
import { inboxes, loadInboxes, me, members, membership, toast, workspaceId } from '../state';
import '../styles/migration.css';
import { FormError } from '../components/FormError';
import { InboxOptions } from '../components/InboxOptions';

type Migration = Schemas['Migration'] & {
  routing?: {
    forwarding_address: string | null;
    ways: { way: 'forwarding' | 'server_routing' | 'mx'; address?: string; domain?: string | null; old_mailbox_keeps_a_copy: boolean }[];
  };
  test_message?: { sent_at: string | null; arrived_at: string | null; route: 'forwarding' | 'direct' | null };
  sync?: {
    history_until: string;
    poll_seconds: number;
    last_polled_at: string | null;
    new_mail_from_old_mailbox: number;
    arrived_both_ways: number;
    quiet_period_hours: number;
    completes_at: string | null;
    stops_at: string | null;
  } | null;
  end_reason?: string | null;
  remove_history?: { confirm_count: number | null; conversations_deleted?: number; contacts_deleted?: number } | null;
};
type State = Migration['state'];
type Preset = {
  id: string;
  name: string;
  kind: 'imap' | 'sign_in' | 'help_desk' | 'export_file';
  imap: { host: string; port: number; tls: 'tls' | 'starttls' | 'none' } | null;
  app_password: 'required' | 'with_two_step' | 'no';
  app_password_url: string | null;
  note: string | null;
  configured?: boolean;
  operator_settings?: string[];
};

/** A preset's name or note in the panel's language (the server's text when there is no translation). */
function presetText(p: { id: string; name?: string; note?: string | null }, field: 'name' | 'note'): string | null {
  const key = `mig.preset.${p.id}.${field}`;
  if (key in migrationEn) return t(key as MessageKey);
  return (field === 'name' ? p.name : p.note) ?? null;
}
/** What kind of source a migration reads, for wording: the preset's kind and the provider's id. */
type Source = { kind: Preset['kind']; provider: string };
const SourceContext = createContext<Source>({ kind: 'imap', provider: 'imap' });

/**
 * A text in the wording of the source (a help desk has tickets and API credentials, a sign-in
 * provider a sign-in, an export file only the file): `key@provider`, then `key@kind`, then `key`.
 */
function sourceText(source: Source, key: MessageKey, vars?: Record<string, string | number>): string {
  for (const variant of [`${key}@${source.provider}`, `${key}@${source.kind}`]) if (variant in migrationEn) return t(variant as MessageKey, vars);
  return t(key, vars);
}
/** sourceText for the migration the wizard shows. */
function useSourceText() {
  const source = useContext(SourceContext);
  return (key: MessageKey, vars?: Record<string, string | number>) => sourceText(source, key, vars);
}

// The presets change only with the server's settings: read once per page load.
let presetsRequest: Promise<Preset[]> | null = null;
function loadPresets(): Promise<Preset[]> {
  presetsRequest ??= must(api.GET('/v1/migrations/presets'))
    .then((r) => r.data as unknown as Preset[])
    .catch((err: unknown) => {
      presetsRequest = null;
      throw err;
    });
  return presetsRequest;
}
const sourceOf = (presets: Preset[], provider: string): Source => ({ kind: presets.find((p) => p.id === provider)?.kind ?? 'imap', provider });

type Detected = { address: string; provider: string; provider_name: string; kind: Preset['kind']; found_by: 'domain' | 'mx' | 'none'; configured: boolean };
type Folder = {
  path: string;
  name: string;
  special_use: string | null;
  selectable: boolean;
  never_read: boolean;
  chosen: boolean;
  messages: number | null;
  /** A help desk's one entry: its tickets (null: the count is unknown). */
  tickets?: number | null;
};
type FolderSummary = {
  path: string;
  special_use: string | null;
  never_read: boolean;
  messages: number;
  to_copy: number;
  skipped: number;
  duplicates: number;
  label: string | null;
};
type PlanSummary = {
  total: number;
  to_copy: number;
  conversations: number;
  duplicates: number;
  skipped: Record<string, number>;
  folders: FolderSummary[];
  missing_folders: string[];
  contacts_to_create: number;
  labels: string[];
  /** A help desk's tags that become labels (absent in plans made before tags were counted). */
  tags?: { tag: string; messages: number; conversations: number }[];
  estimated_bytes: number;
  estimated_seconds: number;
};
type PreviewConversation = {
  subject: string | null;
  contact: { email: string | null; name: string | null; exists: boolean };
  status: 'open' | 'pending' | 'closed';
  labels: string[];
  messages: { direction: 'in' | 'out'; from: { name: string | null; address: string | null }; sent_at: string }[];
  last_message_at: string | null;
};

const STEPS = ['source', 'connect', 'choose', 'map', 'review', 'copy', 'switch', 'done'] as const;
type Step = (typeof STEPS)[number];

/** Where a migration in this state stands in the wizard. */
function stepOfState(state: State): Step {
  if (state === 'draft') return 'connect';
  if (state === 'connected') return 'choose';
  if (state === 'scanning' || state === 'ready') return 'review';
  if (state === 'copying' || state === 'paused' || state === 'needs_attention') return 'copy';
  if (state === 'syncing') return 'switch';
  return 'done';
}

/** The action that lets a person go back to an earlier step. */
const STEP_ACTION: Partial<Record<Step, string[]>> = {
  connect: ['credentials', 'test', 'upload'],
  choose: ['folders', 'update'],
  map: ['update'],
  review: ['preview'],
};

function reachable(m: Migration, step: Step): boolean {
  const natural = STEPS.indexOf(stepOfState(m.state));
  const i = STEPS.indexOf(step);
  if (i === natural) return true;
  // Map follows Choose before the dry run exists; other later steps wait for their state.
  const ahead = i > natural && !(step === 'map' && m.state === 'connected');
  if (ahead || i === 0) return false;
  return (STEP_ACTION[step] ?? []).some((a) => m.allowed_actions.includes(a));
}

const STATE_KEY = (s: State) => `mig.state.${s}` as MessageKey;
const ACTION_KEY = (a: string) => `mig.action.${a}` as MessageKey;

export function MigrationsPage(props: { id?: string }) {
  const role = membership.value?.role;
  useEffect(() => {
    if (workspaceId.value && (role === 'owner' || role === 'admin')) connectRealtime(workspaceId.value);
  }, [workspaceId.value, role]);
  if (role !== 'owner' && role !== 'admin') return <p class="empty">{t('mig.not_allowed')}</p>;
  if (!props.id) return <MigrationList />;
  if (props.id === 'new') return <SourceStep />;
  return <Wizard key={props.id} id={props.id} />;
}

// ---- The list ----

function MigrationList() {
  const { data, error, reload } = useLoad(() => must(api.GET('/v1/migrations', { params: { query: { limit: 200 } } })));
  const presets = useLoad(loadPresets);
  useEffect(() => onEvent((ev) => ev.type === 'migration.updated' && void reload()), []);
  return (
    <>
      <h1>{t('mig.title')}</h1>
      <p class="lead">{t('mig.lead')}</p>
      <p>
        <a class="btn btn-primary mig-link-btn" href="/settings/migrations/new">
          {t('mig.new')}
        </a>
      </p>
      <LoadedList rows={data?.data} error={error} retry={reload} empty={t('mig.empty')}>
        {(migrations) => (
          <DataTable label={t('mig.title')} columns={[t('mig.list.mailbox'), t('mig.list.state'), t('mig.list.progress'), t('mig.list.created')]}>
            {migrations.map((m) => (
              <tr key={m.id}>
                <td>
                  <a href={`/settings/migrations/${m.id}`}>{m.source_address ?? presetText({ id: m.provider, name: m.provider_name }, 'name')}</a>
                  {m.source_address && <div class="muted">{presetText({ id: m.provider, name: m.provider_name }, 'name')}</div>}
                </td>
                <td>
                  <SourceContext.Provider value={sourceOf(presets.data ?? [], m.provider)}>
                    <StatePill state={m.state} />
                  </SourceContext.Provider>
                </td>
                <td>{m.progress.total > 0 ? t('mig.list.copied', { copied: m.progress.copied, percent: m.progress.percent }) : '—'}</td>
                <td>
                  <time title={absoluteTime(m.created_at)}>{relativeTime(m.created_at)}</time>
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </LoadedList>
    </>
  );
}

function StatePill(props: { state: State }) {
  const st = useSourceText();
  const bad = props.state === 'needs_attention' || props.state === 'cancelled';
  const ok = props.state === 'completed' || props.state === 'syncing' || props.state === 'copying';
  return (
    <span class={`mig-state ${bad ? 'pill-bad' : ok ? 'pill-ok' : ''}`} data-state={props.state}>
      {st(STATE_KEY(props.state))}
    </span>
  );
}

function Stepper(props: { current: Step; migration: Migration | null }) {
  return (
    <nav aria-label={t('mig.steps')}>
      <ol class="mig-steps">
        {STEPS.map((s, i) => {
          const here = s === props.current;
          const link = props.migration && !here && reachable(props.migration, s);
          const label = (
            <>
              <span class="mig-step-n" aria-hidden="true">
                {i + 1}
              </span>
              <span>{t(`mig.step.${s}` as MessageKey)}</span>
            </>
          );
          return (
            <li key={s} class={here ? 'mig-step current' : 'mig-step'} aria-current={here ? 'step' : undefined}>
              {link ? <a href={`/settings/migrations/${props.migration!.id}?step=${s}`}>{label}</a> : label}
            </li>
          );
        })}
      </ol>
    </nav>
  );
}

// ---- Step 1: Source ----

function SourceStep() {
  const { route } = useLocation();
  const presets = useLoad(loadPresets);
  const [address, setAddress] = useState('');
  const [detected, setDetected] = useState<Detected | null>(null);
  const [provider, setProvider] = useState('');
  const [host, setHost] = useState('');
  const [port, setPort] = useState('993');
  const [tls, setTls] = useState<'tls' | 'starttls' | 'none'>('tls');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const list = presets.data ?? [];
  const chosen = list.find((p) => p.id === provider) ?? null;

  async function find(e: Event) {
    e.preventDefault();
    setError(null);
    try {
      const d = (await must(api.POST('/v1/migrations/detect', { body: { address: address.trim() } }))) as unknown as Detected;
      setDetected(d);
      setProvider(d.provider);
    } catch (err) {
      setError(errorText(err));
    }
  }
  async function create() {
    if (!chosen) return;
    setBusy(true);
    setError(null);
    try {
      const body = {
        provider: chosen.id,
        ...(address.trim() ? { source_address: address.trim() } : {}),
        ...(chosen.id === 'imap' ? { imap: { host: host.trim(), port: Number(port), tls } } : {}),
      };
      const m = await must(api.POST('/v1/migrations', { body }));
      route(`/settings/migrations/${m.id}`);
    } catch (err) {
      setError(err instanceof ApiError && err.code === 'provider_not_configured' ? t('mig.source.not_configured') : errorText(err));
    } finally {
      setBusy(false);
    }
  }
  return (
    <>
      <p>
        <a href="/settings/migrations">← {t('mig.title')}</a>
      </p>
      <h1>{t('mig.new')}</h1>
      <Stepper current="source" migration={null} />
      <p class="notice" role="note">
        {t('mig.source.nothing_read')}
      </p>
      <form class="card" onSubmit={find}>
        <h2 style={{ marginTop: 0 }}>{t('mig.step.source')}</h2>
        <div class="field">
          <label for="mig-address">{t('mig.source.address')}</label>
          <input
            id="mig-address"
            class="input"
            type="email"
            autoComplete="off"
            maxLength={320}
            value={address}
            aria-describedby="mig-address-hint"
            onInput={(e) => setAddress(e.currentTarget.value)}
          />
          <span class="hint" id="mig-address-hint">
            {t('mig.source.address_hint')}
          </span>
        </div>
        <button class="btn" type="submit" disabled={!address.trim()}>
          {t('mig.source.find')}
        </button>
        {detected && (
          <p class="notice" role="status" data-testid="detected">
            {detected.found_by === 'none'
              ? t('mig.source.found_none')
              : t(detected.found_by === 'mx' ? 'mig.source.found_mx' : 'mig.source.found_domain', { name: detected.provider_name })}
            {!detected.configured && <> {t('mig.source.not_configured')}</>}
          </p>
        )}
      </form>
      <div class="card">
        {!presets.data ? (
          <Loading error={presets.error} retry={presets.reload} />
        ) : (
          <div class="field">
            <label for="mig-provider">{t('mig.source.provider')}</label>
            <select id="mig-provider" class="select" value={provider} onChange={(e) => setProvider(e.currentTarget.value)}>
              <option value="">{t('mig.source.pick')}</option>
              {list.map((p) => (
                <option key={p.id} value={p.id}>
                  {presetText(p, 'name')}
                  {p.configured === false ? ` — ${t('mig.source.needs_setup')}` : ''}
                </option>
              ))}
            </select>
          </div>
        )}
        {chosen?.note && <p class="muted">{presetText(chosen, 'note')}</p>}
        {chosen?.kind === 'sign_in' && chosen.configured === false && <SignInNotConfigured preset={chosen} />}
        {chosen?.id === 'imap' && (
          <fieldset class="field mig-box">
            <legend>{t('mig.source.server')}</legend>
            <div class="field">
              <label for="mig-host">{t('mig.source.host')}</label>
              <input id="mig-host" class="input mono" required placeholder="imap.example.com" value={host} onInput={(e) => setHost(e.currentTarget.value)} />
            </div>
            <div class="mig-inline">
              <div class="field">
                <label for="mig-port">{t('mig.source.port')}</label>
                <input id="mig-port" class="input" type="number" min={1} max={65535} value={port} onInput={(e) => setPort(e.currentTarget.value)} />
              </div>
              <div class="field">
                <label for="mig-tls">{t('mig.source.tls')}</label>
                <select id="mig-tls" class="select" value={tls} onChange={(e) => setTls(e.currentTarget.value as typeof tls)}>
                  <option value="tls">TLS</option>
                  <option value="starttls">STARTTLS</option>
                  <option value="none">{t('mig.source.tls_none')}</option>
                </select>
              </div>
            </div>
          </fieldset>
        )}
        {chosen?.kind === 'export_file' && <p class="muted">{t('mig.source.export_hint')}</p>}
        <FormError error={error} />
        <button class="btn btn-primary" type="button" disabled={!chosen || busy || (chosen.id === 'imap' && !host.trim())} onClick={() => void create()}>
          {t('mig.source.continue')}
        </button>
      </div>
    </>
  );
}

// ---- The wizard of one migration ----

function useMigration(id: string) {
  const [m, setM] = useState<Migration | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [confirmation, setConfirmation] = useState<{ code: string | null; link: string | null; from: string | null } | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const load = async () => {
    try {
      setM((await must(api.GET('/v1/migrations/{migrationId}', { params: { path: { migrationId: id } } }))) as Migration);
      setError(null);
    } catch (err) {
      setError(errorText(err));
    }
  };
  useEffect(() => {
    void load();
    const off = onEvent((ev) => {
      const data = ev.data as {
        migration_id?: string;
        migration?: { id: string };
        progress?: Migration['progress'];
        state?: State;
        code?: string | null;
        link?: string | null;
        from?: string | null;
      };
      const about = data.migration_id ?? data.migration?.id;
      if (about !== id) return;
      if (ev.type === 'migration.progress') {
        // Progress arrives often: shown at once, without a request (an export file's processing
        // progress is the upload step's own; migration.updated follows once it is read).
        if (data.progress) setM((cur) => (cur ? { ...cur, progress: data.progress!, state: data.state ?? cur.state } : cur));
        return;
      }
      if (ev.type === 'migration.forwarding_confirmation') setConfirmation({ code: data.code ?? null, link: data.link ?? null, from: data.from ?? null });
      // migration.updated carries the migration without its switching view: read it whole, once.
      clearTimeout(timer.current);
      timer.current = setTimeout(() => void load(), 150);
    });
    return () => {
      off();
      clearTimeout(timer.current);
    };
  }, [id]);
  return { m, setM, error, reload: load, confirmation };
}

function Wizard(props: { id: string }) {
  const { m, setM, error, reload, confirmation } = useMigration(props.id);
  const presets = useLoad(loadPresets);
  const { query } = useLocation();
  if (!m) return <Loading error={error} retry={reload} />;
  if (!presets.data) return <Loading error={presets.error} retry={presets.reload} />;
  const requested = STEPS.find((s) => s === query.step);
  const step = requested && reachable(m, requested) ? requested : stepOfState(m.state);
  const update = (next: Migration) => setM(next);
  return (
    <SourceContext.Provider value={sourceOf(presets.data, m.provider)}>
      <p>
        <a href="/settings/migrations">← {t('mig.title')}</a>
      </p>
      <h1 class="mig-title">
        {m.source_address ?? presetText({ id: m.provider, name: m.provider_name }, 'name')} <StatePill state={m.state} />
      </h1>
      {m.source_address && <p class="muted">{presetText({ id: m.provider, name: m.provider_name }, 'name')}</p>}
      <Stepper current={step} migration={m} />
      <ReadOnlyNote m={m} />
      <ActionBar m={m} onChanged={update} reload={reload} />
      {step === 'connect' && <ConnectStep m={m} onChanged={update} />}
      {step === 'choose' && <ChooseStep m={m} onChanged={update} />}
      {step === 'map' && <MapStep m={m} onChanged={update} />}
      {step === 'review' && <ReviewStep m={m} />}
      {step === 'copy' && <CopyStep m={m} onChanged={update} />}
      {step === 'switch' && <SwitchStep m={m} confirmation={confirmation} />}
      {step === 'done' && <DoneStep m={m} />}
      <Activity id={m.id} updatedAt={m.updated_at} />
    </SourceContext.Provider>
  );
}

function ReadOnlyNote(props: { m: Migration }) {
  const st = useSourceText();
  return (
    <p class="notice mig-readonly" role="note" data-testid="read-only">
      <strong>{t('mig.readonly.title')}</strong> {st('mig.readonly.text')}
      {props.m.read_only.blocked_commands > 0 && <> {st('mig.readonly.blocked', { n: props.m.read_only.blocked_commands })}</>}
    </p>
  );
}

/** Actions that change the migration from the bar; the others open the step where their form is. */
const BUTTON_ACTIONS = new Set(['scan', 'start', 'pause', 'resume', 'cancel', 'retry', 'probe', 'finish', 'remove_history', 'delete']);
const DANGER_ACTIONS = new Set(['cancel', 'delete', 'remove_history']);
const isPrimaryAction = (m: Migration, a: string) => a === 'start' || a === 'resume' || (a === 'scan' && m.state === 'connected');

/** The action bar's order: the step's next action first, the ones that end or delete something last. */
function actionOrder(m: Migration): string[] {
  const rank = (a: string) => (isPrimaryAction(m, a) ? 0 : DANGER_ACTIONS.has(a) ? 2 : 1);
  return [...m.allowed_actions].sort((a, b) => rank(a) - rank(b));
}
const FORM_STEPS: Record<string, Step[]> = {
  update: ['map', 'choose', 'connect'],
  credentials: ['connect'],
  test: ['connect'],
  upload: ['connect'],
  folders: ['choose'],
  preview: ['review'],
};

/** The step whose form does an action: the first of its steps open now. */
function formStep(m: Migration, action: string): Step {
  const steps = FORM_STEPS[action] ?? ['connect'];
  return steps.find((s) => reachable(m, s)) ?? steps[0];
}

/** Exactly the migration's allowed_actions, each as a button or as a link to its form. */
function ActionBar(props: { m: Migration; onChanged: (m: Migration) => void; reload: () => Promise<void> }) {
  const { m } = props;
  const st = useSourceText();
  const { route } = useLocation();
  const [asking, setAsking] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [probeWait, setProbeWait] = useState<number | null>(null);
  const path = { migrationId: m.id };
  async function run(action: string, body?: Record<string, unknown>) {
    setBusy(true);
    try {
      if (action === 'delete') {
        await must(api.DELETE('/v1/migrations/{migrationId}', { params: { path } }));
        route('/settings/migrations');
        return;
      }
      if (action === 'probe') {
        const r = await api.POST('/v1/migrations/{migrationId}/probe', { params: { path } });
        if (r.response.status === 429) {
          setProbeWait(Number(r.response.headers.get('retry-after') ?? '60'));
          return;
        }
        await must(Promise.resolve(r));
        setProbeWait(null);
        toast(t('mig.switch.probe_sent'));
        await props.reload();
        return;
      }
      const url = `/v1/migrations/{migrationId}/${action.replace('_', '-')}` as '/v1/migrations/{migrationId}/start';
      const next = await must(api.POST(url, { params: { path }, ...(body ? { body: body as never } : {}) }));
      // A new state shows its own step, not an earlier one opened before.
      route(`/settings/migrations/${m.id}`, true);
      props.onChanged(next as Migration);
      await props.reload();
    } catch (err) {
      toast(t('action.failed', { error: errorText(err) }));
    } finally {
      setBusy(false);
      setAsking(null);
    }
  }
  const shown = actionOrder(m);
  if (shown.length === 0) return <p class="muted mig-actions-none">{t('mig.actions.none')}</p>;
  return (
    <>
      <div class="row-actions mig-actions" role="group" aria-label={t('mig.actions')}>
        {shown.map((a) => {
          if (!BUTTON_ACTIONS.has(a)) {
            const step = formStep(m, a);
            return (
              <a key={a} class="btn btn-ghost" data-action={a} href={`/settings/migrations/${m.id}?step=${step}`}>
                {st(ACTION_KEY(a))}
              </a>
            );
          }
          const danger = DANGER_ACTIONS.has(a);
          const primary = isPrimaryAction(m, a);
          const confirm = danger || a === 'finish';
          // The first of the destructive actions starts a group of its own, set apart at the end.
          const firstDanger = danger && shown.find((x) => DANGER_ACTIONS.has(x)) === a;
          return (
            <button
              key={a}
              type="button"
              data-action={a}
              disabled={busy}
              class={`btn ${danger ? 'btn-danger' : primary ? 'btn-primary' : ''}${firstDanger ? ' mig-actions-danger' : ''}`}
              onClick={() => (confirm ? setAsking(a) : void run(a))}
            >
              {st(ACTION_KEY(a))}
            </button>
          );
        })}
      </div>
      {probeWait !== null && <RateLimited seconds={probeWait} />}
      {asking === 'cancel' && (
        <Confirm
          title={t('mig.action.cancel')}
          lead={st('mig.cancel.lead')}
          action={t('mig.action.cancel')}
          onClose={() => setAsking(null)}
          onConfirm={() => run('cancel')}
        />
      )}
      {asking === 'delete' && (
        <Confirm
          title={t('mig.action.delete')}
          lead={t('mig.delete.lead')}
          action={t('mig.action.delete')}
          onClose={() => setAsking(null)}
          onConfirm={() => run('delete')}
        />
      )}
      {asking === 'finish' && <FinishDialog m={m} onClose={() => setAsking(null)} onFinish={(force) => run('finish', force ? { force: true } : undefined)} />}
      {asking === 'remove_history' && (
        <RemoveHistoryDialog m={m} onClose={() => setAsking(null)} onRemoved={(next) => (props.onChanged(next), void props.reload())} />
      )}
    </>
  );
}

// ---- Step 2: Connect ----

function ConnectStep(props: { m: Migration; onChanged: (m: Migration) => void }) {
  const { m } = props;
  const { route, query } = useLocation();
  // Once connected the wizard would move on to Choose: stay here to show the test's result first.
  const changed = (next: Migration) => {
    if (next.state !== 'draft' && query.step !== 'connect') route(`/settings/migrations/${m.id}?step=connect`, true);
    props.onChanged(next);
  };
  const st = useSourceText();
  const presets = useLoad(loadPresets);
  const preset = presets.data?.find((p) => p.id === m.provider);
  const [result, setResult] = useState<ConnectionTestResult | null>(null);
  const [wait, setWait] = useState<number | null>(null);
  const [busy, setBusy] = useState(false);
  // Back from the provider's sign-in: test the connection once, at once.
  const signedIn = typeof query.signed_in === 'string' ? query.signed_in : undefined;
  const signInError = typeof query.sign_in_error === 'string' ? query.sign_in_error : undefined;
  const [testedAfterSignIn, setTestedAfterSignIn] = useState(false);
  useEffect(() => {
    if (signedIn && !testedAfterSignIn && m.allowed_actions.includes('test')) {
      setTestedAfterSignIn(true);
      void test();
    }
  }, [signedIn, m.allowed_actions.includes('test')]);
  if (m.allowed_actions.includes('upload') || (preset?.kind === 'export_file' && m.state === 'draft')) {
    return <MigrationUpload migrationId={m.id} onConnected={props.onChanged} />;
  }
  if (preset?.kind === 'export_file') return <p class="notice">{t('mig.upload.already')}</p>;
  async function test() {
    setBusy(true);
    setWait(null);
    try {
      const r = await runConnectionTest(m.id);
      if ('retryAfter' in r) setWait(r.retryAfter);
      else {
        setResult(r.result);
        changed(r.migration);
      }
    } catch (err) {
      toast(t('action.failed', { error: errorText(err) }));
    } finally {
      setBusy(false);
    }
  }
  return (
    <>
      <section class="card" aria-labelledby="mig-how">
        <h2 id="mig-how" style={{ marginTop: 0 }}>
          {st('mig.connect.title')}
        </h2>
        {m.imap && (
          <p>
            {t('mig.connect.server')} <span class="mono">{`${m.imap.host}:${m.imap.port}`}</span> ·{' '}
            {m.imap.tls === 'none' ? t('mig.connect.no_tls') : m.imap.tls.toUpperCase()}
          </p>
        )}
        {preset && preset.app_password !== 'no' && (
          <p>{t(preset.app_password === 'required' ? 'mig.connect.app_password_required' : 'mig.connect.app_password_two_step')}</p>
        )}
        {preset?.note && <p class="muted">{presetText(preset, 'note')}</p>}
        {preset?.app_password_url && preset.kind !== 'sign_in' && (
          <p>
            <a href={preset.app_password_url} target="_blank" rel="noopener noreferrer">
              {t('mig.connect.make_app_password')}
            </a>
          </p>
        )}
      </section>
      {preset?.kind === 'sign_in' && <SignInOutcome signedIn={signedIn} error={signInError} provider={m.provider} />}
      {m.allowed_actions.includes('credentials') &&
        (preset?.kind === 'sign_in' ? (
          <MigrationSignIn migration={m} preset={preset} />
        ) : preset?.kind === 'help_desk' ? (
          <HelpDeskCredentialsForm migration={m} onSaved={(next) => (setResult(null), next && changed(next))} />
        ) : (
          preset && <MigrationPasswordForm migration={m} testAfterSave onSaved={(next) => (setResult(null), next && changed(next))} />
        ))}
      {m.allowed_actions.includes('test') && (
        <p>
          <button class="btn" type="button" disabled={busy} onClick={() => void test()}>
            {busy ? t('mig.working') : t('mig.connect.test_again')}
          </button>
        </p>
      )}
      {wait !== null && <RateLimited seconds={wait} />}
      {result && <ConnectionTestSteps result={result} helpDesk={preset?.kind === 'help_desk'} />}
      {m.state !== 'draft' && (
        <p>
          <a class="btn btn-primary mig-link-btn" href={`/settings/migrations/${m.id}?step=choose`}>
            {st('mig.next.choose')}
          </a>
        </p>
      )}
    </>
  );
}

// ---- Step 3: Choose ----

const SINCE_OPTIONS = [
  ['all', 0],
  ['1y', 365],
  ['2y', 730],
  ['5y', 1825],
] as const;

function ChooseStep(props: { m: Migration; onChanged: (m: Migration) => void }) {
  const { m } = props;
  const st = useSourceText();
  const { route } = useLocation();
  const folders = useLoad(
    () => must(api.GET('/v1/migrations/{migrationId}/folders', { params: { path: { migrationId: m.id } } })).then((r) => r.data as unknown as Folder[]),
    [m.id],
  );
  const [picked, setPicked] = useState<string[] | null>(null);
  const [since, setSince] = useState(m.date_from ?? '');
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (folders.data && picked === null) setPicked(folders.data.filter((f) => f.chosen).map((f) => f.path));
  }, [folders.data]);
  if (!m.allowed_actions.includes('folders') && m.allowed_actions.includes('update')) {
    // An export file: its folders were read with the file; every one is copied unless chosen otherwise later.
    return (
      <p>
        <a class="btn btn-primary mig-link-btn" href={`/settings/migrations/${m.id}?step=map`}>
          {t('mig.next.map')}
        </a>
      </p>
    );
  }
  if (!folders.data || picked === null) return <Loading error={folders.error} retry={folders.reload} />;
  // A help desk has no folders: one entry, every ticket, with the count the provider gives.
  const helpDesk = folders.data.some((f) => f.tickets !== undefined);
  const sinceDays = (days: number) => (days === 0 ? '' : new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10));
  async function save(e: Event) {
    e.preventDefault();
    setError(null);
    try {
      const next = await must(
        api.PATCH('/v1/migrations/{migrationId}', { params: { path: { migrationId: m.id } }, body: { folders: picked!, date_from: since || null } }),
      );
      props.onChanged(next as Migration);
      route(`/settings/migrations/${m.id}?step=map`);
    } catch (err) {
      setError(errorText(err));
    }
  }
  return (
    <form class="card" onSubmit={save}>
      <h2 style={{ marginTop: 0 }}>{t('mig.choose.title')}</h2>
      <p class="muted">{st('mig.choose.lead')}</p>
      <fieldset class="field mig-box">
        <legend>{t(helpDesk ? 'mig.choose.tickets' : 'mig.choose.folders')}</legend>
        <ul role="list" class="mig-folder-list">
          {folders.data.map((f) => {
            const disabled = f.never_read || !f.selectable;
            return (
              <li key={f.path} class={disabled ? 'mig-folder never' : 'mig-folder'}>
                <label>
                  <input
                    type="checkbox"
                    disabled={disabled}
                    checked={!disabled && picked.includes(f.path)}
                    onChange={() => setPicked(picked.includes(f.path) ? picked.filter((x) => x !== f.path) : [...picked, f.path])}
                  />
                  {f.tickets !== undefined ? (
                    <span>{f.tickets === null ? t('mig.choose.all_tickets') : t('mig.choose.all_tickets_n', { n: f.tickets })}</span>
                  ) : (
                    <>
                      <span class="mono">{f.path}</span>
                      <span class="muted">{f.messages === null ? '' : t('mig.choose.messages', { n: f.messages })}</span>
                    </>
                  )}
                </label>
                {f.never_read && <span class="hint">{t('mig.choose.never_read')}</span>}
                {!f.never_read && !f.selectable && <span class="hint">{t('mig.choose.not_selectable')}</span>}
              </li>
            );
          })}
        </ul>
      </fieldset>
      <div class="field">
        <label for="mig-since">{t('mig.choose.since')}</label>
        <select
          id="mig-since"
          class="select"
          value={SINCE_OPTIONS.find(([, d]) => sinceDays(d) === since)?.[0] ?? (since ? 'custom' : 'all')}
          onChange={(e) => {
            const v = e.currentTarget.value;
            const opt = SINCE_OPTIONS.find(([k]) => k === v);
            if (opt) setSince(sinceDays(opt[1]));
          }}
        >
          {SINCE_OPTIONS.map(([k]) => (
            <option key={k} value={k}>
              {t(`mig.choose.since_${k}` as MessageKey)}
            </option>
          ))}
          {since && !SINCE_OPTIONS.some(([, d]) => sinceDays(d) === since) && <option value="custom">{since}</option>}
        </select>
      </div>
      <FormError error={error} />
      <button class="btn btn-primary" type="submit" disabled={picked.length === 0}>
        {t('mig.next.map')}
      </button>
    </form>
  );
}

// ---- Step 4: Map ----

function MapStep(props: { m: Migration; onChanged: (m: Migration) => void }) {
  const { m } = props;
  const st = useSourceText();
  const { route } = useLocation();
  const [inboxId, setInboxId] = useState(m.inbox_id ?? inboxes.value[0]?.id ?? '');
  const channels = useLoad(
    () =>
      inboxId
        ? must(api.GET('/v1/channels', { params: { query: { inbox_id: inboxId } } })).then((r) => r.data.filter((c) => c.kind === 'email'))
        : Promise.resolve([]),
    [inboxId],
  );
  const [channelId, setChannelId] = useState(m.channel_id ?? '');
  const [newChannel, setNewChannel] = useState({ name: '', address: m.source_address ?? '' });
  const startTeam = { ...(m.source_address ? { [m.source_address]: null } : {}), ...m.team_members };
  const [team, setTeam] = useState<Record<string, string | null>>(startTeam);
  const [extra, setExtra] = useState('');
  const summary = m.plan.summary as PlanSummary | null;
  const chosenFolders = m.folders ?? summary?.folders.filter((f) => !f.never_read).map((f) => f.path) ?? [];
  const [labels, setLabels] = useState<Record<string, string>>(Object.fromEntries(Object.entries(m.folder_labels).map(([k, v]) => [k, v ?? ''])));
  const [closeAfter, setCloseAfter] = useState(String(m.close_after_days));
  const [skipAutomatic, setSkipAutomatic] = useState(m.skip_automatic);
  const [keepOriginals, setKeepOriginals] = useState(m.keep_originals);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (channels.data && !channels.data.some((c) => c.id === channelId)) setChannelId(channels.data[0]?.id ?? '');
  }, [channels.data]);
  const locked = !!m.copy_started_at;

  async function createChannel() {
    setError(null);
    try {
      const c = await must(
        api.POST('/v1/channels', { body: { kind: 'email', inbox_id: inboxId, name: newChannel.name || newChannel.address, address: newChannel.address } }),
      );
      await channels.reload();
      setChannelId(c.id);
      void loadInboxes();
    } catch (err) {
      setError(errorText(err));
    }
  }
  async function save(e: Event) {
    e.preventDefault();
    setError(null);
    setBusy(true);
    try {
      const folderLabels = Object.fromEntries(
        Object.entries(labels)
          .filter(([, v]) => v.trim() !== '')
          .map(([k, v]) => [k, v.trim()]),
      );
      const body = {
        ...(locked ? {} : { inbox_id: inboxId || null, channel_id: channelId || null }),
        team_members: Object.fromEntries(Object.entries(team).filter(([a]) => a.trim())),
        folder_labels: folderLabels,
        close_after_days: Number(closeAfter),
        skip_automatic: skipAutomatic,
        keep_originals: keepOriginals,
      };
      let next = (await must(api.PATCH('/v1/migrations/{migrationId}', { params: { path: { migrationId: m.id } }, body }))) as Migration;
      if (next.state === 'connected' && next.allowed_actions.includes('scan'))
        next = (await must(api.POST('/v1/migrations/{migrationId}/scan', { params: { path: { migrationId: m.id } } }))) as Migration;
      props.onChanged(next);
      route(`/settings/migrations/${m.id}?step=review`);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }
  return (
    <form class="card" onSubmit={save}>
      <h2 style={{ marginTop: 0 }}>{t('mig.map.title')}</h2>
      <div class="mig-inline">
        <div class="field">
          <label for="mig-inbox">{t('mig.map.inbox')}</label>
          <select id="mig-inbox" class="select" value={inboxId} disabled={locked} onChange={(e) => setInboxId(e.currentTarget.value)}>
            <InboxOptions />
          </select>
        </div>
        <div class="field">
          <label for="mig-channel">{t('mig.map.channel')}</label>
          <select
            id="mig-channel"
            class="select"
            value={channelId}
            disabled={locked || !channels.data?.length}
            onChange={(e) => setChannelId(e.currentTarget.value)}
          >
            {(channels.data ?? []).map((c) => (
              <option key={c.id} value={c.id}>
                {c.address ? `${c.name} <${c.address}>` : c.name}
              </option>
            ))}
          </select>
        </div>
      </div>
      {channels.data && channels.data.length === 0 && !locked && (
        <fieldset class="field mig-box">
          <legend>{t('mig.map.no_channel')}</legend>
          <div class="mig-inline">
            <div class="field">
              <label for="mig-ch-name">{t('channels.name')}</label>
              <input
                id="mig-ch-name"
                class="input"
                maxLength={200}
                value={newChannel.name}
                onInput={(e) => setNewChannel({ ...newChannel, name: e.currentTarget.value })}
              />
            </div>
            <div class="field">
              <label for="mig-ch-address">{t('channels.address')}</label>
              <input
                id="mig-ch-address"
                class="input"
                type="email"
                value={newChannel.address}
                onInput={(e) => setNewChannel({ ...newChannel, address: e.currentTarget.value })}
              />
            </div>
          </div>
          <button class="btn" type="button" disabled={!newChannel.address.trim()} onClick={() => void createChannel()}>
            {t('mig.map.create_channel')}
          </button>
        </fieldset>
      )}
      <fieldset class="field mig-box">
        <legend>{t('mig.map.team')}</legend>
        <span class="hint">{st('mig.map.team_hint')}</span>
        <table class="table mig-map-table">
          <tbody>
            {Object.entries(team).map(([addr, person]) => (
              <tr key={addr}>
                <th scope="row" class="mono">
                  {addr}
                </th>
                <td>
                  <select
                    class="select"
                    aria-label={t('mig.map.member_for', { address: addr })}
                    value={person ?? ''}
                    onChange={(e) => setTeam({ ...team, [addr]: e.currentTarget.value || null })}
                  >
                    <option value="">{t('mig.map.original_name')}</option>
                    {members.value.map((mem) => (
                      <option key={mem.person_id} value={mem.person_id}>
                        {mem.person_id === me.value?.person.id ? `${mem.name ?? mem.email} (${t('conv.you')})` : (mem.name ?? mem.email)}
                      </option>
                    ))}
                  </select>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <div class="mig-inline">
          <input
            class="input"
            type="email"
            aria-label={t('mig.map.add_address')}
            placeholder={t('mig.map.add_address')}
            value={extra}
            onInput={(e) => setExtra(e.currentTarget.value)}
          />
          <button
            class="btn"
            type="button"
            disabled={!extra.includes('@')}
            onClick={() => {
              setTeam({ ...team, [extra.trim().toLowerCase()]: null });
              setExtra('');
            }}
          >
            {t('mig.map.add')}
          </button>
        </div>
      </fieldset>
      {chosenFolders.length > 0 && (
        <fieldset class="field mig-box">
          <legend>{st('mig.map.labels')}</legend>
          <span class="hint">{st('mig.map.labels_hint')}</span>
          <table class="table mig-map-table">
            <tbody>
              {chosenFolders.map((f) => (
                <tr key={f}>
                  <th scope="row" class="mono">
                    {f}
                  </th>
                  <td>
                    <input
                      class="input"
                      maxLength={100}
                      aria-label={t('mig.map.label_for', { folder: f })}
                      placeholder={summary?.folders.find((x) => x.path === f)?.label ?? t('mig.map.label_default')}
                      value={labels[f] ?? ''}
                      onInput={(e) => setLabels({ ...labels, [f]: e.currentTarget.value })}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </fieldset>
      )}
      <div class="field">
        <label for="mig-close">{t('mig.map.close_after')}</label>
        <input
          id="mig-close"
          class="input"
          type="number"
          min={0}
          max={3650}
          style={{ maxWidth: '140px' }}
          value={closeAfter}
          aria-describedby="mig-close-hint"
          onInput={(e) => setCloseAfter(e.currentTarget.value)}
        />
        <span class="hint" id="mig-close-hint">
          {t('mig.map.close_after_hint')}
        </span>
      </div>
      <label class="field mig-check">
        <input type="checkbox" checked={skipAutomatic} onChange={() => setSkipAutomatic(!skipAutomatic)} />
        {t('mig.map.skip_automatic')}
      </label>
      <label class="field mig-check">
        <input type="checkbox" checked={keepOriginals} onChange={() => setKeepOriginals(!keepOriginals)} />
        {t('mig.map.keep_originals')}
        {summary && (
          <span class="muted"> · {t('mig.map.keep_cost', { size: formatBytes(keepOriginals ? summary.estimated_bytes / 2 : summary.estimated_bytes) })}</span>
        )}
      </label>
      <FormError error={error} />
      <button class="btn btn-primary" type="submit" disabled={busy || !inboxId || !channelId}>
        {busy ? t('mig.working') : t('mig.next.review')}
      </button>
    </form>
  );
}

// ---- Step 5: Review ----

function ReviewStep(props: { m: Migration }) {
  const { m } = props;
  const st = useSourceText();
  const source = useContext(SourceContext);
  const summary = m.plan.summary as PlanSummary | null;
  const preview = useLoad(
    () =>
      m.allowed_actions.includes('preview') && summary
        ? must(api.GET('/v1/migrations/{migrationId}/preview', { params: { path: { migrationId: m.id }, query: { limit: 10 } } })).then(
            (r) => r.data as unknown as PreviewConversation[],
          )
        : Promise.resolve([]),
    [m.id, m.plan.current, m.state],
  );
  if (m.state === 'scanning' || !summary) {
    return (
      <section class="card" aria-busy="true">
        <h2 style={{ marginTop: 0 }}>{t('mig.review.title')}</h2>
        <p role="status">{m.state === 'scanning' ? st('mig.review.scanning') : t('mig.review.not_planned')}</p>
      </section>
    );
  }
  const skippedTotal = Object.values(summary.skipped).reduce((a, b) => a + b, 0);
  return (
    <>
      <section class="card" aria-labelledby="mig-review-title">
        <h2 id="mig-review-title" style={{ marginTop: 0 }}>
          {t('mig.review.title')}
        </h2>
        <p>{t('mig.review.nothing_yet')}</p>
        {!m.plan.current && <p class="notice notice-warn">{t('mig.review.outdated')}</p>}
        <dl class="mig-totals" data-testid="totals">
          <div>
            <dt>{st('mig.review.total')}</dt>
            <dd>{summary.total}</dd>
          </div>
          <div>
            <dt>{t('mig.review.to_copy')}</dt>
            <dd>{summary.to_copy}</dd>
          </div>
          <div>
            <dt>{t('mig.review.conversations')}</dt>
            <dd>{summary.conversations}</dd>
          </div>
          <div>
            <dt>{t('mig.review.skipped')}</dt>
            <dd>{skippedTotal}</dd>
          </div>
          <div>
            <dt>{t('mig.review.duplicates')}</dt>
            <dd>{summary.duplicates}</dd>
          </div>
          <div>
            <dt>{t('mig.review.contacts')}</dt>
            <dd>{summary.contacts_to_create}</dd>
          </div>
          <div>
            <dt>{t('mig.review.storage')}</dt>
            <dd>{formatBytes(summary.estimated_bytes)}</dd>
          </div>
          <div>
            <dt>{t('mig.review.time')}</dt>
            <dd>{formatDuration(summary.estimated_seconds)}</dd>
          </div>
        </dl>
        <DataTable
          label={st('mig.review.per_folder')}
          caption
          columns={[
            st('mig.review.folder'),
            t('mig.review.messages'),
            t('mig.review.to_copy'),
            t('mig.review.skipped'),
            t('mig.review.duplicates'),
            t('mig.review.label'),
          ]}
        >
          {summary.folders.map((f) => (
            <tr key={f.path} class={f.never_read ? 'mig-folder never' : undefined}>
              <th scope="row" class="mono">
                {f.path}
                {f.never_read && <div class="hint">{t('mig.choose.never_read')}</div>}
              </th>
              <td>{f.messages}</td>
              <td>{f.to_copy}</td>
              <td>{f.skipped}</td>
              <td>{f.duplicates}</td>
              <td>{f.label ?? '—'}</td>
            </tr>
          ))}
        </DataTable>
        {skippedTotal > 0 && (
          <>
            <h3>{st('mig.review.skipped_why')}</h3>
            <ul>
              {Object.entries(summary.skipped)
                .filter(([, n]) => n > 0)
                .map(([reason, n]) => (
                  <li key={reason}>
                    {n} · {skipReason(reason)}
                  </li>
                ))}
            </ul>
          </>
        )}
        {summary.missing_folders.length > 0 && <p class="notice notice-warn">{t('mig.review.missing', { folders: summary.missing_folders.join(', ') })}</p>}
        {summary.labels.length > 0 && <p>{t('mig.review.labels', { labels: summary.labels.join(', ') })}</p>}
        {source.kind === 'help_desk' && summary.tags && <TagCounts tags={summary.tags} />}
        <p class="muted">{t('mig.review.change_hint')}</p>
      </section>
      <section class="card" aria-labelledby="mig-preview-title">
        <h2 id="mig-preview-title" style={{ marginTop: 0 }}>
          {t('mig.review.preview')}
        </h2>
        <LoadedList rows={preview.data} error={preview.error} retry={preview.reload} empty={t('mig.review.preview_empty')}>
          {(conversations) => (
            <ul role="list" class="mig-preview">
              {conversations.map((c, i) => (
                <li key={i} class="mig-preview-row">
                  <span class={`dot-${c.status}`} aria-hidden="true" />
                  <div>
                    <strong>{c.contact.name ?? c.contact.email ?? t('list.unknown_contact')}</strong>{' '}
                    <span class="muted">{c.subject ?? t('list.no_subject')}</span>
                    <div class="muted">
                      {t(`status.${c.status}`)} · {t('conv.imported')} · {t('mig.review.n_messages', { n: c.messages.length })}
                      {c.labels.length > 0 && <> · {c.labels.join(', ')}</>}
                    </div>
                  </div>
                  {c.last_message_at && (
                    <time class="muted" title={absoluteTime(c.last_message_at)}>
                      {relativeTime(c.last_message_at)}
                    </time>
                  )}
                </li>
              ))}
            </ul>
          )}
        </LoadedList>
      </section>
    </>
  );
}

/** A help desk's tags that become labels, with the conversations and messages to copy that carry each. */
function TagCounts(props: { tags: NonNullable<PlanSummary['tags']> }) {
  if (props.tags.length === 0) return <p class="muted">{t('mig.review.no_tags')}</p>;
  return (
    <>
      <h3>{t('mig.review.tags')}</h3>
      <DataTable label={t('mig.review.tags')} testId="tag-counts" columns={[t('mig.review.tag'), t('mig.review.conversations'), t('mig.review.messages')]}>
        {props.tags.map((tag) => (
          <tr key={tag.tag}>
            <th scope="row">{tag.tag}</th>
            <td>{tag.conversations}</td>
            <td>{tag.messages}</td>
          </tr>
        ))}
      </DataTable>
    </>
  );
}

const SKIP_KEYS: Record<string, MessageKey> = {
  never_read: 'mig.skip.never_read',
  duplicate: 'mig.skip.duplicate',
  draft: 'mig.skip.draft',
  too_large: 'mig.skip.too_large',
  outside_date_range: 'mig.skip.outside_date_range',
  automatic_only: 'mig.skip.automatic_only',
  team_only: 'mig.skip.team_only',
  gone: 'mig.skip.gone',
  test_message: 'mig.skip.test_message',
};
function skipReason(reason: string): string {
  return SKIP_KEYS[reason] ? t(SKIP_KEYS[reason]) : reason;
}

function formatDuration(seconds: number): string {
  if (seconds < 60) return t('mig.duration.seconds', { n: Math.max(1, Math.round(seconds)) });
  if (seconds < 3600) return t('mig.duration.minutes', { n: Math.round(seconds / 60) });
  return t('mig.duration.hours', { n: Math.round(seconds / 360) / 10 });
}

// ---- Step 6: Copy ----

const ATTENTION_KEYS: Record<string, [MessageKey, MessageKey]> = {
  login_failed: ['mig.attention.login_failed', 'mig.attention.login_failed_fix'],
  provider_limit: ['mig.attention.provider_limit', 'mig.attention.provider_limit_fix'],
  connection_failed: ['mig.attention.connection_failed', 'mig.attention.connection_failed_fix'],
  address_refused: ['mig.attention.address_refused', 'mig.attention.address_refused_fix'],
  read_only_check: ['mig.attention.read_only_check', 'mig.attention.read_only_check_fix'],
  sign_in_needed: ['mig.attention.sign_in_needed', 'mig.attention.sign_in_needed_fix'],
};

function CopyStep(props: { m: Migration; onChanged: (m: Migration) => void }) {
  const { m } = props;
  const p = m.progress;
  const errors = useLoad(
    () => must(api.GET('/v1/migrations/{migrationId}/errors', { params: { path: { migrationId: m.id }, query: { limit: 50 } } })),
    [m.id, p.failed, m.state],
  );
  return (
    <>
      {m.state === 'needs_attention' && m.attention && <Attention m={m} onChanged={props.onChanged} />}
      <section class="card" aria-labelledby="mig-copy-title">
        <h2 id="mig-copy-title" style={{ marginTop: 0 }}>
          {t('mig.copy.title')}
        </h2>
        <p class="muted">{t('mig.copy.lead')}</p>
        <ProgressBar m={m} />
        <dl class="mig-totals">
          <div>
            <dt>{t('mig.copy.copied')}</dt>
            <dd data-testid="copied">{p.copied}</dd>
          </div>
          <div>
            <dt>{t('mig.copy.left')}</dt>
            <dd>{p.planned}</dd>
          </div>
          <div>
            <dt>{t('mig.review.conversations')}</dt>
            <dd>{p.conversations}</dd>
          </div>
          <div>
            <dt>{t('mig.review.skipped')}</dt>
            <dd>{p.skipped}</dd>
          </div>
          <div>
            <dt>{t('mig.review.duplicates')}</dt>
            <dd>{p.duplicates}</dd>
          </div>
          <div>
            <dt>{t('mig.copy.failed')}</dt>
            <dd>{p.failed}</dd>
          </div>
        </dl>
        {m.state === 'paused' && <p class="notice">{t('mig.copy.paused')}</p>}
        <p class="muted">{t('mig.copy.banner')}</p>
      </section>
      {errors.data && (errors.data.data.length > 0 || (errors.data as { blocked_commands?: unknown[] }).blocked_commands?.length) ? (
        <ErrorList data={errors.data as unknown as ErrorsAnswer} />
      ) : null}
    </>
  );
}

type ErrorsAnswer = {
  data: { source: { folder: string; uid: number | null }; subject: string | null; sent_at: string | null; error: string | null; attempts: number }[];
  blocked_commands: { at: string; command?: string }[];
};

function ErrorList(props: { data: ErrorsAnswer }) {
  return (
    <section class="card" aria-labelledby="mig-errors-title">
      <h2 id="mig-errors-title" style={{ marginTop: 0 }}>
        {t('mig.errors.title')}
      </h2>
      <ul>
        {props.data.data.map((e, i) => (
          <li key={i}>
            <strong>{e.subject ?? t('list.no_subject')}</strong> <span class="muted mono">{e.source.folder}</span> — {e.error ?? ''}{' '}
            <span class="muted">{t('mig.errors.attempts', { n: e.attempts })}</span>
          </li>
        ))}
        {props.data.blocked_commands.map((b, i) => (
          <li key={`b${i}`}>{t('mig.errors.blocked', { command: b.command ?? '?', when: absoluteTime(b.at) })}</li>
        ))}
      </ul>
    </section>
  );
}

function ProgressBar(props: { m: Migration }) {
  const p = props.m.progress;
  return (
    <div class="mig-progress-block">
      <progress class="mig-progress" max={100} value={p.percent} aria-label={t('mig.copy.progress_label')} />
      <p aria-live="polite" data-testid="progress-text">
        {t('mig.copy.progress', { percent: p.percent, copied: p.copied, total: p.copied + p.planned + p.failed })}
      </p>
    </div>
  );
}

function Attention(props: { m: Migration; onChanged: (m: Migration) => void }) {
  const { m } = props;
  const st = useSourceText();
  const source = useContext(SourceContext);
  const a = m.attention!;
  const [cause, fix] = ATTENTION_KEYS[a.reason ?? ''] ?? ['mig.attention.other', 'mig.attention.other_fix'];
  return (
    <section class="card mig-attention" role="alert" aria-labelledby="mig-attention-title">
      <h2 id="mig-attention-title" style={{ marginTop: 0 }}>
        {t('mig.attention.title')}
      </h2>
      <p data-testid="attention-cause">{st(cause)}</p>
      {a.message && <p class="muted mono">{a.message}</p>}
      <p>{st(fix, { when: a.retry_at ? absoluteTime(a.retry_at) : '' })}</p>
      {a.reason === 'login_failed' && m.allowed_actions.includes('credentials') && source.kind === 'help_desk' && (
        <HelpDeskCredentialsForm migration={m} onSaved={(next) => next && props.onChanged(next)} />
      )}
      {a.reason === 'login_failed' && m.allowed_actions.includes('credentials') && source.kind === 'sign_in' && (
        <MigrationSignIn migration={m} preset={{ id: m.provider, configured: true }} />
      )}
      {a.reason === 'login_failed' && m.allowed_actions.includes('credentials') && source.kind === 'imap' && (
        <MigrationPasswordForm
          migration={m}
          idPrefix="mig-fix"
          submitLabel={t('mig.attention.save_password')}
          onSaved={(next) => next && props.onChanged(next)}
        />
      )}
      {a.reason === 'sign_in_needed' && m.allowed_actions.includes('credentials') && (
        <MigrationSignIn migration={m} preset={{ id: m.provider, configured: true }} />
      )}
    </section>
  );
}

// ---- Step 7: Switch ----

function SwitchStep(props: { m: Migration; confirmation: { code: string | null; link: string | null; from: string | null } | null }) {
  const { m } = props;
  const st = useSourceText();
  const routing = m.routing;
  const tm = m.test_message;
  const sync = m.sync;
  return (
    <>
      <ProgressBar m={m} />
      <section class="card" aria-labelledby="mig-switch-title">
        <h2 id="mig-switch-title" style={{ marginTop: 0 }}>
          {t('mig.switch.title')}
        </h2>
        <p>{st('mig.switch.lead', { minutes: Math.round((sync?.poll_seconds ?? 120) / 60) })}</p>
        {!routing?.forwarding_address && <p class="notice">{t('mig.switch.mx_only')}</p>}
        <ol class="mig-ways">
          {routing?.ways.map((w) => (
            <li key={w.way} class="mig-way">
              <h3>{t(`mig.way.${w.way}` as MessageKey)}</h3>
              <p class="muted">
                {t(`mig.way.${w.way}_who` as MessageKey)} · {w.old_mailbox_keeps_a_copy ? t('mig.way.keeps_copy') : t('mig.way.no_copy')}
              </p>
              {w.address && <CopyField label={t('mig.switch.forwarding_address')} value={w.address} />}
              {w.way === 'mx' && <p>{t('mig.way.mx_how', { domain: w.domain ?? '—' })}</p>}
            </li>
          ))}
        </ol>
        {props.confirmation && (
          <div class="notice" role="status" data-testid="forwarding-confirmation">
            <p style={{ marginTop: 0 }}>
              <strong>{t('mig.switch.confirmation', { from: props.confirmation.from ?? '' })}</strong>
            </p>
            {props.confirmation.code && <CopyField label={t('mig.switch.confirmation_code')} value={props.confirmation.code} />}
            {props.confirmation.link && (
              <p>
                <a href={props.confirmation.link} target="_blank" rel="noopener noreferrer">
                  {t('mig.switch.confirmation_link')}
                </a>
              </p>
            )}
          </div>
        )}
      </section>
      <section class="card" aria-labelledby="mig-test-title">
        <h2 id="mig-test-title" style={{ marginTop: 0 }}>
          {t('mig.switch.test_title')}
        </h2>
        <p class="muted">{st('mig.switch.test_lead')}</p>
        <p role="status" data-testid="test-message">
          {tm?.arrived_at
            ? t(tm.route === 'forwarding' ? 'mig.switch.arrived_forwarding' : 'mig.switch.arrived_direct', { when: absoluteTime(tm.arrived_at) })
            : tm?.sent_at
              ? t('mig.switch.sent_waiting', { when: absoluteTime(tm.sent_at) })
              : t('mig.switch.not_sent')}
        </p>
        {sync && (
          <ul class="muted">
            <li>{t('mig.switch.history_until', { when: absoluteTime(sync.history_until) })}</li>
            {sync.last_polled_at && <li>{st('mig.switch.last_polled', { when: relativeTime(sync.last_polled_at) })}</li>}
            <li>{st('mig.switch.new_mail', { n: sync.new_mail_from_old_mailbox, both: sync.arrived_both_ways })}</li>
            {sync.stops_at && <li>{t('mig.switch.stops_at', { when: absoluteTime(sync.stops_at) })}</li>}
          </ul>
        )}
        {sync?.completes_at ? (
          <Countdown until={sync.completes_at} />
        ) : (
          <p class="muted">{st('mig.switch.quiet_after_test', { hours: sync?.quiet_period_hours ?? 24 })}</p>
        )}
      </section>
    </>
  );
}

function Countdown(props: { until: string }) {
  const st = useSourceText();
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  const left = Math.max(0, Date.parse(props.until) - now);
  const h = Math.floor(left / 3_600_000);
  const min = Math.floor((left % 3_600_000) / 60_000);
  const s = Math.floor((left % 60_000) / 1000);
  return (
    <p class="notice" data-testid="countdown">
      {st('mig.switch.countdown', { time: `${h}:${String(min).padStart(2, '0')}:${String(s).padStart(2, '0')}`, when: absoluteTime(props.until) })}
    </p>
  );
}

function FinishDialog(props: { m: Migration; onClose: () => void; onFinish: (force: boolean) => Promise<void> }) {
  const st = useSourceText();
  const arrived = !!props.m.test_message?.arrived_at;
  return (
    <Confirm title={t('mig.action.finish')} lead={arrived ? st('mig.finish.lead') : t('mig.finish.no_test')} onClose={props.onClose}>
      <div class="row-actions">
        {arrived && (
          <button class="btn btn-primary" type="button" onClick={() => void props.onFinish(false)}>
            {t('mig.finish.now')}
          </button>
        )}
      </div>
      <div class="notice notice-warn">
        <p style={{ marginTop: 0 }}>{st('mig.finish.force_warning')}</p>
        <button class="btn btn-danger" type="button" onClick={() => void props.onFinish(true)}>
          {t('mig.finish.force')}
        </button>
      </div>
    </Confirm>
  );
}

// ---- Step 8: Done ----

function DoneStep(props: { m: Migration }) {
  const { m } = props;
  const st = useSourceText();
  // An export file had no password or sign-in to delete.
  const ap = useContext(SourceContext).kind === 'export_file' ? null : m.app_password;
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

function RemoveHistoryDialog(props: { m: Migration; onClose: () => void; onRemoved: (m: Migration) => void }) {
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

// ---- The activity log ----

function Activity(props: { id: string; updatedAt: string }) {
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
};
