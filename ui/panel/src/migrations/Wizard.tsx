// The wizard of one migration: loads it, follows it live and shows the step its state allows.
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, errorText, must } from '../api';
import { Loading, useLoad } from '../components/Loading';
import { t } from '../i18n';
import { onEvent } from '../realtime';
import { ActionBar } from './ActionBar';
import { Activity } from './Activity';
import { loadPresets, type Migration, presetText, reachable, SourceContext, STEPS, type State, sourceOf, stepOfState, useSourceText } from './model';
import { StatePill, Stepper } from './Stepper';
import { ChooseStep } from './steps/ChooseStep';
import { ConnectStep } from './steps/ConnectStep';
import { CopyStep } from './steps/CopyStep';
import { DoneStep } from './steps/DoneStep';
import { MapStep } from './steps/MapStep';
import { ReviewStep } from './steps/ReviewStep';
import { SwitchStep } from './steps/SwitchStep';

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

export function Wizard(props: { id: string }) {
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
      <ActionBar m={m} step={step} onChanged={update} reload={reload} />
      {step === 'connect' && <ConnectStep m={m} onChanged={update} />}
      {step === 'choose' && <ChooseStep m={m} onChanged={update} />}
      {step === 'map' && <MapStep m={m} onChanged={update} />}
      {step === 'review' && <ReviewStep m={m} />}
      {step === 'copy' && <CopyStep m={m} onChanged={update} />}
      {step === 'switch' && <SwitchStep m={m} confirmation={confirmation} onChanged={update} />}
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
