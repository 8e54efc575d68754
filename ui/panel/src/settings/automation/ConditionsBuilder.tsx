// A rule's trigger and its "all/any" conditions: one row per condition, field → test → value, the
// value picked from the workspace's real inboxes, members, teams and labels where it names one.
import {
  blankCondition,
  CHANNEL_KINDS,
  CONDITION_FIELDS,
  type Condition,
  type ConditionField,
  type Conditions,
  CustomFieldKey,
  CustomFieldValueInput,
  FIELDS,
  inboxOptions,
  labelSuggestions,
  makeTrigger,
  memberOptions,
  needsValue,
  PRIORITIES,
  STATUSES,
  TRIGGER_AMOUNT,
  TRIGGER_TYPES,
  type Trigger,
  type TriggerType,
  teamOptions,
  triggerAmount,
} from '../../automation';
import { type MessageKey, t } from '../../i18n';

export function TriggerField(props: { trigger: Trigger; onChange: (tr: Trigger) => void }) {
  const spec = TRIGGER_AMOUNT[props.trigger.type];
  const amount = triggerAmount(props.trigger);
  return (
    <div class="auto-trigger">
      <div class="field">
        <label for="rule-trigger">{t('auto.trigger')}</label>
        <select id="rule-trigger" class="select" value={props.trigger.type} onChange={(e) => props.onChange(makeTrigger(e.currentTarget.value as TriggerType))}>
          {TRIGGER_TYPES.map((type) => (
            <option key={type} value={type}>
              {t(`trig.${type}`)}
            </option>
          ))}
        </select>
      </div>
      {spec && (
        <div class="field">
          <label for="rule-trigger-amount">{t(`auto.trigger_${spec.field}`)}</label>
          <input
            id="rule-trigger-amount"
            class="input auto-number"
            type="number"
            min={1}
            max={spec.max}
            inputMode="numeric"
            aria-describedby="rule-trigger-hint"
            value={amount === null || Number.isNaN(amount) ? '' : amount}
            onInput={(e) => props.onChange(makeTrigger(props.trigger.type, e.currentTarget.valueAsNumber))}
          />
          <span class="hint" id="rule-trigger-hint">
            {t('auto.time_hint')}
          </span>
        </div>
      )}
    </div>
  );
}

export function ConditionsBuilder(props: { conditions: Conditions; onChange: (c: Conditions) => void }) {
  const { match, items } = props.conditions;
  const setItems = (next: Condition[]) => props.onChange({ match, items: next });
  const focus = (id: string) => requestAnimationFrame(() => document.getElementById(id)?.focus());
  return (
    <div class="auto-conditions">
      <div class="field auto-match">
        <label for="rule-match">{t('auto.match')}</label>
        <select id="rule-match" class="select" value={match} onChange={(e) => props.onChange({ match: e.currentTarget.value as 'all' | 'any', items })}>
          <option value="all">{t('auto.match_all')}</option>
          <option value="any">{t('auto.match_any')}</option>
        </select>
      </div>
      {items.length === 0 && <p class="muted">{t('auto.no_conditions')}</p>}
      <ol class="auto-rows" role="list">
        {items.map((c, i) => (
          <li key={i}>
            <ConditionRow
              n={i + 1}
              condition={c}
              onChange={(x) => setItems(items.map((y, j) => (j === i ? x : y)))}
              onRemove={() => {
                setItems(items.filter((_, j) => j !== i));
                focus(items.length > 1 ? `cond-${Math.min(i, items.length - 2)}-field` : 'cond-add');
              }}
            />
          </li>
        ))}
      </ol>
      <button
        id="cond-add"
        class="btn"
        type="button"
        onClick={() => {
          setItems([...items, blankCondition('subject')]);
          focus(`cond-${items.length}-field`);
        }}
      >
        + {t('auto.add_condition')}
      </button>
    </div>
  );
}

function ConditionRow(props: { n: number; condition: Condition; onChange: (c: Condition) => void; onRemove: () => void }) {
  const c = props.condition;
  const id = `cond-${props.n - 1}`;
  const spec = FIELDS[c.field];
  return (
    <fieldset class="auto-row">
      <legend class="visually-hidden">{t('auto.condition_n', { n: props.n })}</legend>
      <span class="auto-row-n" aria-hidden="true">
        {props.n}
      </span>
      <div class="field">
        <label for={`${id}-field`}>{t('auto.field')}</label>
        <select id={`${id}-field`} class="select" value={c.field} onChange={(e) => props.onChange(blankCondition(e.currentTarget.value as ConditionField))}>
          {CONDITION_FIELDS.map((f) => (
            <option key={f} value={f}>
              {t(`cond.${f}`)}
            </option>
          ))}
        </select>
      </div>
      {c.field === 'custom_field' && (
        <CustomFieldKey id={`${id}-key`} value={c.key ?? ''} onChange={(key) => props.onChange({ ...c, key, value: needsValue(c) ? '' : null })} />
      )}
      {c.field === 'contact_attribute' && (
        <div class="field">
          <label for={`${id}-key`}>{t('auto.key')}</label>
          <input id={`${id}-key`} class="input" maxLength={100} value={c.key ?? ''} onInput={(e) => props.onChange({ ...c, key: e.currentTarget.value })} />
        </div>
      )}
      <div class="field">
        <label for={`${id}-op`}>{t('auto.operator')}</label>
        <select
          id={`${id}-op`}
          class="select"
          value={c.operator}
          onChange={(e) => {
            const operator = e.currentTarget.value;
            props.onChange({ ...c, operator, value: needsValue({ field: c.field, operator }) ? (c.value ?? blankCondition(c.field).value ?? '') : null });
          }}
        >
          {spec.operators.map((op) => (
            <option key={op} value={op}>
              {t(`op.${op}` as MessageKey)}
            </option>
          ))}
        </select>
      </div>
      {needsValue(c) &&
        (c.field === 'custom_field' ? (
          <CustomFieldValueInput id={`${id}-value`} fieldKey={c.key ?? ''} value={c.value ?? ''} onChange={(value) => props.onChange({ ...c, value })} />
        ) : (
          <ConditionValue id={`${id}-value`} condition={c} onChange={(value) => props.onChange({ ...c, value })} />
        ))}
      <div class="auto-row-buttons">
        <button
          class="btn btn-ghost"
          type="button"
          aria-label={t('auto.remove_condition', { n: props.n })}
          title={t('auto.remove_condition', { n: props.n })}
          onClick={props.onRemove}
        >
          ✕
        </button>
      </div>
    </fieldset>
  );
}

function ConditionValue(props: { id: string; condition: Condition; onChange: (v: string) => void }) {
  const c = props.condition;
  const kind = FIELDS[c.field].value;
  const value = c.value ?? '';
  const choices: { id: string; name: string }[] | null =
    kind === 'inbox'
      ? inboxOptions()
      : kind === 'member'
        ? memberOptions()
        : kind === 'team'
          ? teamOptions()
          : kind === 'channel_kind'
            ? CHANNEL_KINDS.map((k) => ({ id: k, name: t(`source.${k}`) }))
            : kind === 'priority'
              ? PRIORITIES.map((p) => ({ id: p, name: t(`priority.${p}`) }))
              : kind === 'status'
                ? STATUSES.map((s) => ({ id: s, name: t(`status.${s}`) }))
                : null;
  if (choices) {
    return (
      <div class="field">
        <label for={props.id}>{t('auto.value')}</label>
        <select id={props.id} class="select" value={value} onChange={(e) => props.onChange(e.currentTarget.value)}>
          {(kind === 'inbox' || kind === 'member' || kind === 'team') && <option value="">{t('cond.choose')}</option>}
          {choices.map((o) => (
            <option key={o.id} value={o.id}>
              {o.name}
            </option>
          ))}
        </select>
      </div>
    );
  }
  const pattern = c.operator === 'matches';
  const hint = pattern ? t('cond.pattern_hint') : kind === 'domain' ? t('cond.domain_hint') : null;
  return (
    <div class="field auto-grow">
      <label for={props.id}>{t('auto.value')}</label>
      <input
        id={props.id}
        class={pattern ? 'input mono' : 'input'}
        maxLength={pattern ? 200 : 500}
        list={kind === 'label' ? `${props.id}-labels` : undefined}
        aria-describedby={hint ? `${props.id}-hint` : undefined}
        value={value}
        onInput={(e) => props.onChange(e.currentTarget.value)}
      />
      {kind === 'label' && (
        <datalist id={`${props.id}-labels`}>
          {labelSuggestions().map((l) => (
            <option key={l} value={l} />
          ))}
        </datalist>
      )}
      {hint && (
        <span class="hint" id={`${props.id}-hint`}>
          {hint}
        </span>
      )}
    </div>
  );
}
