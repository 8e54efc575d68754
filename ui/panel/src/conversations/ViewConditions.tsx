// The view dialog's condition builder: one row per condition (what → its value), "Add condition",
// ✕ to remove. Every row is native controls, so it is worked with Tab, arrows and Space alone.
import { CustomFieldKey, CustomFieldValueInput, labelSuggestions } from '../automation';
import { type MessageKey, t } from '../i18n';
import {
  ATTRIBUTE_OPS,
  afterOfDay,
  beforeOfDay,
  blankRow,
  choiceName,
  choicesOf,
  dayOfAfter,
  dayOfBefore,
  freeLabelMode,
  isChoice,
  type Kind,
  kindsFree,
  LABEL_MODES,
  type LabelMode,
  needsAttributeValue,
  type Row,
} from './view-conditions';

const focus = (id: string) => requestAnimationFrame(() => document.getElementById(id)?.focus());

export function ViewConditions(props: { rows: Row[]; onChange: (rows: Row[]) => void }) {
  const { rows } = props;
  const free = kindsFree(rows);
  const withKind = (kind: Kind, at = -1): Row => (kind === 'label' ? { ...blankRow(kind), mode: freeLabelMode(rows, at) } : blankRow(kind));
  return (
    <div class="view-conditions">
      <h3 class="view-conditions-title" id="view-conditions-title">
        {t('sv.conditions')}
      </h3>
      {rows.length === 0 && <p class="muted">{t('sv.no_conditions')}</p>}
      <ol class="auto-rows" role="list" aria-labelledby="view-conditions-title">
        {rows.map((r, i) => (
          <li key={i}>
            <ConditionRow
              n={i + 1}
              row={r}
              kinds={kindsFree(rows, i)}
              labelModes={LABEL_MODES.filter((m) => m === r.mode || !rows.some((x, j) => j !== i && x.kind === 'label' && x.mode === m))}
              onKind={(kind) => props.onChange(rows.map((x, j) => (j === i ? withKind(kind, i) : x)))}
              onChange={(x) => props.onChange(rows.map((y, j) => (j === i ? x : y)))}
              onRemove={() => {
                props.onChange(rows.filter((_, j) => j !== i));
                focus(rows.length > 1 ? `vc-${Math.min(i, rows.length - 2)}-kind` : 'vc-add');
              }}
            />
          </li>
        ))}
      </ol>
      {free.length > 0 && (
        <button
          id="vc-add"
          class="btn"
          type="button"
          onClick={() => {
            props.onChange([...rows, withKind(free[0])]);
            focus(`vc-${rows.length}-kind`);
          }}
        >
          + {t('sv.add_condition')}
        </button>
      )}
    </div>
  );
}

function ConditionRow(props: {
  n: number;
  row: Row;
  kinds: Kind[];
  labelModes: LabelMode[];
  onKind: (k: Kind) => void;
  onChange: (r: Row) => void;
  onRemove: () => void;
}) {
  const r = props.row;
  const id = `vc-${props.n - 1}`;
  const set = (patch: Partial<Row>) => props.onChange({ ...r, ...patch });
  return (
    <fieldset class="auto-row view-condition">
      <legend class="visually-hidden">{t('sv.condition_n', { n: props.n })}</legend>
      <span class="auto-row-n" aria-hidden="true">
        {props.n}
      </span>
      <div class="field">
        <label for={`${id}-kind`}>{t('sv.condition')}</label>
        <select id={`${id}-kind`} class="select" value={r.kind} onChange={(e) => props.onKind(e.currentTarget.value as Kind)}>
          {props.kinds.map((k) => (
            <option key={k} value={k}>
              {t(`sv.kind_${k}` as MessageKey)}
            </option>
          ))}
        </select>
      </div>
      {isChoice(r.kind) && <Choices id={id} row={r} onChange={(values) => set({ values })} />}
      {r.kind === 'label' && (
        <>
          <div class="field">
            <label for={`${id}-mode`}>{t('sv.label_mode')}</label>
            <select id={`${id}-mode`} class="select" value={r.mode} onChange={(e) => set({ mode: e.currentTarget.value as LabelMode })}>
              {props.labelModes.map((m) => (
                <option key={m} value={m}>
                  {t(`sv.label_${m}` as MessageKey)}
                </option>
              ))}
            </select>
          </div>
          <div class="field auto-grow">
            <label for={`${id}-value`}>{t('sv.labels')}</label>
            <input
              id={`${id}-value`}
              class="input"
              list={`${id}-labels`}
              placeholder="billing, vip"
              value={r.text}
              onInput={(e) => set({ text: e.currentTarget.value })}
            />
            <datalist id={`${id}-labels`}>
              {labelSuggestions().map((l) => (
                <option key={l} value={l} />
              ))}
            </datalist>
          </div>
        </>
      )}
      {(r.kind === 'snoozed' || r.kind === 'imported' || r.kind === 'spam') && (
        <div class="field auto-grow">
          <label for={`${id}-value`}>{t('sv.value')}</label>
          <select id={`${id}-value`} class="select" value={r.text} onChange={(e) => set({ text: e.currentTarget.value })}>
            <option value="true">{t(`sv.${r.kind}_yes` as MessageKey)}</option>
            <option value="false">{t(`sv.${r.kind}_no` as MessageKey)}</option>
          </select>
        </div>
      )}
      {r.kind === 'sla' && (
        <div class="field auto-grow">
          <label for={`${id}-value`}>{t('sv.value')}</label>
          <select id={`${id}-value`} class="select" value={r.text} onChange={(e) => set({ text: e.currentTarget.value })}>
            <option value="breached">{t('sv.sla_breached')}</option>
            <option value="running">{t('sv.sla_running')}</option>
            <option value="none">{t('sv.sla_none')}</option>
          </select>
        </div>
      )}
      {(r.kind === 'created' || r.kind === 'last_activity') && (
        <>
          <div class="field">
            <label for={`${id}-from`}>{t('sv.from_day')}</label>
            <input
              id={`${id}-from`}
              class="input"
              type="date"
              value={dayOfAfter(r.after)}
              onChange={(e) => set({ after: afterOfDay(e.currentTarget.value) })}
            />
          </div>
          <div class="field">
            <label for={`${id}-to`}>{t('sv.to_day')}</label>
            <input
              id={`${id}-to`}
              class="input"
              type="date"
              value={dayOfBefore(r.before)}
              onChange={(e) => set({ before: beforeOfDay(e.currentTarget.value) })}
            />
          </div>
        </>
      )}
      {r.kind === 'contact_attribute' && (
        <>
          <div class="field">
            <label for={`${id}-key`}>{t('sv.attribute')}</label>
            <input id={`${id}-key`} class="input" maxLength={100} placeholder="plan" value={r.key} onInput={(e) => set({ key: e.currentTarget.value })} />
          </div>
          <div class="field">
            <label for={`${id}-op`}>{t('sv.operator')}</label>
            <select id={`${id}-op`} class="select" value={r.op} onChange={(e) => set({ op: e.currentTarget.value })}>
              {ATTRIBUTE_OPS.map((op) => (
                <option key={op} value={op}>
                  {t(`sv.op_${op}` as MessageKey)}
                </option>
              ))}
            </select>
          </div>
          {needsAttributeValue(r.op) && (
            <div class="field auto-grow">
              <label for={`${id}-value`}>{t('sv.value')}</label>
              <input id={`${id}-value`} class="input" maxLength={200} value={r.text} onInput={(e) => set({ text: e.currentTarget.value })} />
            </div>
          )}
        </>
      )}
      {r.kind === 'custom_field' && (
        <>
          <CustomFieldKey id={`${id}-key`} label={t('sv.field')} value={r.key} onChange={(key) => set({ key, text: '' })} />
          {r.key && <CustomFieldValueInput id={`${id}-value`} fieldKey={r.key} value={r.text} onChange={(text) => set({ text })} />}
        </>
      )}
      {r.kind === 'text' && (
        <div class="field auto-grow">
          <label for={`${id}-value`}>{t('sv.text')}</label>
          <input id={`${id}-value`} class="input" maxLength={200} value={r.text} onInput={(e) => set({ text: e.currentTarget.value })} />
        </div>
      )}
      <div class="auto-row-buttons">
        <button
          class="btn btn-ghost"
          type="button"
          aria-label={t('sv.remove_condition', { n: props.n })}
          title={t('sv.remove_condition', { n: props.n })}
          onClick={props.onRemove}
        >
          ✕
        </button>
      </div>
    </fieldset>
  );
}

/** A multiple choice as checkboxes: any of the ticked ones matches. */
function Choices(props: { id: string; row: Row; onChange: (values: string[]) => void }) {
  const r = props.row;
  const toggle = (v: string, on: boolean) => props.onChange(on ? [...r.values, v] : r.values.filter((x) => x !== v));
  return (
    <fieldset class="field auto-grow view-choices">
      <legend>{t('sv.any_of')}</legend>
      <div class="check-row-group">
        {choicesOf(r.kind, r.values).map((v) => (
          <label key={v} class="check-row">
            <input type="checkbox" checked={r.values.includes(v)} onChange={(e) => toggle(v, e.currentTarget.checked)} />
            {choiceName(r.kind, v)}
          </label>
        ))}
      </div>
    </fieldset>
  );
}
