// An inbox's SLA targets (on its settings page): first response, next response and resolution in
// minutes of business hours, for every conversation and optionally per priority. Saved with
// PUT /v1/inboxes/{id}/sla; a refused value shows the server's reason, naming the field.
import { useState } from 'preact/hooks';
import { api, errorText, must } from '../../api';
import { FormError } from '../../components/FormError';
import { Loading, useLoad } from '../../components/Loading';
import { t } from '../../i18n';
import { toast } from '../../state';
import './sla-settings.css';

const TARGETS = ['first_response', 'next_response', 'resolution'] as const;
const PRIORITIES = ['urgent', 'high', 'medium', 'low'] as const;
type Row = Record<(typeof TARGETS)[number], string>;
type Shown = { first_response_minutes: number | null; next_response_minutes: number | null; resolution_minutes: number | null } | null | undefined;

const rowOf = (s: Shown): Row => ({
  first_response: s?.first_response_minutes?.toString() ?? '',
  next_response: s?.next_response_minutes?.toString() ?? '',
  resolution: s?.resolution_minutes?.toString() ?? '',
});
const empty = (r: Row) => TARGETS.every((k) => r[k].trim() === '');
const bodyOf = (r: Row) =>
  Object.fromEntries(TARGETS.map((k) => [`${k}_minutes`, r[k].trim() === '' ? null : Number(r[k])])) as {
    first_response_minutes: number | null;
    next_response_minutes: number | null;
    resolution_minutes: number | null;
  };

export function SlaCard(props: { inboxId: string }) {
  const { inboxId } = props;
  const { data, error, reload } = useLoad(() => must(api.GET('/v1/inboxes/{inboxId}/sla', { params: { path: { inboxId } } })), [inboxId]);
  return (
    <section class="card" aria-labelledby="sla-title">
      <h2 id="sla-title" style={{ marginTop: 0 }}>
        {t('sla.title')}
      </h2>
      <p class="muted">{t('sla.lead')}</p>
      {!data ? <Loading error={error} retry={reload} /> : <SlaForm key={data.updated_at ?? ''} inboxId={inboxId} saved={data} onSaved={reload} />}
    </section>
  );
}

function SlaForm(props: {
  inboxId: string;
  saved: { default: Shown; by_priority: Partial<Record<(typeof PRIORITIES)[number], Shown>> };
  onSaved: () => unknown;
}) {
  const [rows, setRows] = useState<Record<string, Row>>(() => ({
    default: rowOf(props.saved.default),
    ...Object.fromEntries(PRIORITIES.map((p) => [p, rowOf(props.saved.by_priority[p])])),
  }));
  const [problem, setProblem] = useState<string | null>(null);
  const set = (row: string, k: (typeof TARGETS)[number], v: string) => setRows((old) => ({ ...old, [row]: { ...old[row], [k]: v } }));

  const fields = (row: string, legend: string) => (
    <fieldset class="sla-row" key={row}>
      <legend>{legend}</legend>
      {TARGETS.map((k) => (
        <label key={k} class="sla-field">
          <span>{t(`sla.target.${k}`)}</span>
          <span class="sla-input">
            <input
              type="number"
              inputMode="numeric"
              step="1"
              name={`${row}.${k}_minutes`}
              value={rows[row][k]}
              onInput={(e) => set(row, k, (e.target as HTMLInputElement).value)}
            />
            <span class="muted">{t('sla.minutes')}</span>
          </span>
        </label>
      ))}
    </fieldset>
  );

  return (
    <form
      class="sla-form"
      onSubmit={async (e) => {
        e.preventDefault();
        setProblem(null);
        try {
          const byPriority = Object.fromEntries(PRIORITIES.filter((p) => !empty(rows[p])).map((p) => [p, bodyOf(rows[p])]));
          const body = { default: empty(rows.default) ? null : bodyOf(rows.default), by_priority: byPriority };
          await must(api.PUT('/v1/inboxes/{inboxId}/sla', { params: { path: { inboxId: props.inboxId } }, body }));
          toast(t('settings.saved'));
          void props.onSaved();
        } catch (err) {
          setProblem(errorText(err));
        }
      }}
    >
      {!props.saved.default && !Object.keys(props.saved.by_priority).length && <p class="muted">{t('sla.none')}</p>}
      {fields('default', t('sla.row.default'))}
      <details class="sla-priorities" open={Object.keys(props.saved.by_priority).length > 0}>
        <summary>{t('sla.by_priority')}</summary>
        <p class="muted sla-hint">{t('sla.row.priority_hint')}</p>
        {PRIORITIES.map((p) => fields(p, t('sla.row.priority', { priority: t(`priority.${p}`) })))}
      </details>
      <FormError error={problem} />
      <button class="btn btn-primary" type="submit">
        {t('sla.save')}
      </button>
    </form>
  );
}
