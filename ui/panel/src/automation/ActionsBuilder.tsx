// The ordered list of actions, for a rule and for a macro alike: each row picks what to do and its
// value (members, teams, saved replies and webhook endpoints from the API), moves up or down, goes.

import { t } from '../i18n';
import { CustomFieldKey, CustomFieldValueInput, shownValue, typedValue } from './CustomFieldInputs';
import './automation.css';
import { ACTION_TYPES, type Action, type ActionType, blankAction, PRIORITIES, type Priority, STATUSES, type Status } from './model';
import { endpoints, labelSuggestions, memberOptions, type Named, savedReplies, teamOptions } from './options';

export function ActionsBuilder(props: { id: string; actions: Action[]; onChange: (actions: Action[]) => void }) {
  const { actions, onChange } = props;
  const set = (i: number, a: Action) => onChange(actions.map((x, j) => (j === i ? a : x)));
  const focusRow = (i: number, part: string) => requestAnimationFrame(() => document.getElementById(`${props.id}-${i}-${part}`)?.focus());
  const move = (i: number, by: -1 | 1) => {
    const next = actions.slice();
    [next[i], next[i + by]] = [next[i + by], next[i]];
    onChange(next);
    // The focus follows the moved row; at an end, to the other button of the row.
    const to = i + by;
    focusRow(to, (by < 0 && to === 0) || (by > 0 && to === actions.length - 1) ? (by < 0 ? 'down' : 'up') : by < 0 ? 'up' : 'down');
  };
  return (
    <div class="auto-actions">
      {actions.length === 0 && <p class="muted">{t('act.none')}</p>}
      <ol class="auto-rows" role="list">
        {actions.map((a, i) => (
          <li key={i}>
            <fieldset class="auto-row">
              <legend class="visually-hidden">{t('act.n', { n: i + 1 })}</legend>
              <span class="auto-row-n" aria-hidden="true">
                {i + 1}
              </span>
              <div class="field">
                <label for={`${props.id}-${i}-type`}>{t('act.type')}</label>
                <select id={`${props.id}-${i}-type`} class="select" value={a.type} onChange={(e) => set(i, blankAction(e.currentTarget.value as ActionType))}>
                  {ACTION_TYPES.map((type) => (
                    <option key={type} value={type}>
                      {t(`act.${type}`)}
                    </option>
                  ))}
                </select>
              </div>
              <ActionValue id={`${props.id}-${i}`} action={a} onChange={(x) => set(i, x)} />
              <div class="auto-row-buttons">
                <button
                  id={`${props.id}-${i}-up`}
                  class="btn btn-ghost"
                  type="button"
                  disabled={i === 0}
                  aria-label={t('act.move_up', { n: i + 1 })}
                  title={t('act.move_up', { n: i + 1 })}
                  onClick={() => move(i, -1)}
                >
                  ↑
                </button>
                <button
                  id={`${props.id}-${i}-down`}
                  class="btn btn-ghost"
                  type="button"
                  disabled={i === actions.length - 1}
                  aria-label={t('act.move_down', { n: i + 1 })}
                  title={t('act.move_down', { n: i + 1 })}
                  onClick={() => move(i, 1)}
                >
                  ↓
                </button>
                <button
                  class="btn btn-ghost"
                  type="button"
                  aria-label={t('act.remove', { n: i + 1 })}
                  title={t('act.remove', { n: i + 1 })}
                  onClick={() => {
                    onChange(actions.filter((_, j) => j !== i));
                    focusRow(Math.max(0, Math.min(i, actions.length - 2)), 'type');
                    if (actions.length === 1) requestAnimationFrame(() => document.getElementById(`${props.id}-add`)?.focus());
                  }}
                >
                  ✕
                </button>
              </div>
            </fieldset>
          </li>
        ))}
      </ol>
      <button
        id={`${props.id}-add`}
        class="btn"
        type="button"
        onClick={() => {
          onChange([...actions, blankAction('add_label')]);
          focusRow(actions.length, 'type');
        }}
      >
        + {t('act.add')}
      </button>
    </div>
  );
}

function Pick(props: { id: string; label: string; value: string; options: Named[]; onChange: (v: string) => void }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <select id={props.id} class="select" value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
        <option value="">{t('cond.choose')}</option>
        {props.options.map((o) => (
          <option key={o.id} value={o.id}>
            {o.name}
          </option>
        ))}
      </select>
    </div>
  );
}

function ActionValue(props: { id: string; action: Action; onChange: (a: Action) => void }) {
  const { action: a, id } = props;
  const valueId = `${id}-value`;
  switch (a.type) {
    case 'assign_member':
      return (
        <Pick id={valueId} label={t('act.member')} value={a.member_id} options={memberOptions()} onChange={(v) => props.onChange({ ...a, member_id: v })} />
      );
    case 'assign_team':
      return <Pick id={valueId} label={t('act.team')} value={a.team_id} options={teamOptions()} onChange={(v) => props.onChange({ ...a, team_id: v })} />;
    case 'send_saved_reply':
      return (
        <Pick
          id={valueId}
          label={t('act.saved_reply')}
          value={a.saved_reply_id}
          options={savedReplies.value}
          onChange={(v) => props.onChange({ ...a, saved_reply_id: v })}
        />
      );
    case 'send_webhook':
      return endpoints.value.length ? (
        <Pick
          id={valueId}
          label={t('act.endpoint')}
          value={a.endpoint_id}
          options={endpoints.value}
          onChange={(v) => props.onChange({ ...a, endpoint_id: v })}
        />
      ) : (
        <p class="muted auto-row-note">{t('act.no_endpoints')}</p>
      );
    case 'add_label':
    case 'remove_label':
      return (
        <div class="field">
          <label for={valueId}>{t('act.label')}</label>
          <input
            id={valueId}
            class="input"
            maxLength={64}
            list={`${id}-labels`}
            value={a.label}
            onInput={(e) => props.onChange({ ...a, label: e.currentTarget.value })}
          />
          <datalist id={`${id}-labels`}>
            {labelSuggestions().map((l) => (
              <option key={l} value={l} />
            ))}
          </datalist>
        </div>
      );
    case 'set_priority':
      return (
        <div class="field">
          <label for={valueId}>{t('act.priority')}</label>
          <select
            id={valueId}
            class="select"
            value={a.priority ?? ''}
            onChange={(e) => props.onChange({ ...a, priority: (e.currentTarget.value || null) as Priority | null })}
          >
            <option value="">{t('details.priority_none')}</option>
            {PRIORITIES.map((p) => (
              <option key={p} value={p}>
                {t(`priority.${p}`)}
              </option>
            ))}
          </select>
        </div>
      );
    case 'set_status':
      return (
        <div class="field">
          <label for={valueId}>{t('act.status')}</label>
          <select id={valueId} class="select" value={a.status} onChange={(e) => props.onChange({ ...a, status: e.currentTarget.value as Status })}>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {t(`status.${s}`)}
              </option>
            ))}
          </select>
        </div>
      );
    case 'snooze':
      return (
        <div class="field">
          <label for={valueId}>{t('act.hours')}</label>
          <input
            id={valueId}
            class="input auto-number"
            type="number"
            min={1}
            max={8760}
            inputMode="numeric"
            value={Number.isNaN(a.hours) ? '' : a.hours}
            onInput={(e) => props.onChange({ ...a, hours: e.currentTarget.valueAsNumber })}
          />
        </div>
      );
    case 'add_note':
      return (
        <div class="field auto-grow">
          <label for={valueId}>{t('act.note')}</label>
          <textarea
            id={valueId}
            class="textarea"
            rows={2}
            maxLength={5000}
            value={a.text}
            onInput={(e) => props.onChange({ ...a, text: e.currentTarget.value })}
          />
        </div>
      );
    case 'set_custom_field':
      return (
        <>
          <CustomFieldKey id={`${id}-key`} value={a.key} onChange={(key) => props.onChange({ ...a, key, value: null })} />
          {a.key && (
            <CustomFieldValueInput
              id={valueId}
              fieldKey={a.key}
              value={shownValue(a.value)}
              onChange={(text) => props.onChange({ ...a, value: typedValue(a.key, text) })}
            />
          )}
        </>
      );
    case 'notify_members':
      return (
        <fieldset class="field auto-grow auto-members">
          <legend>{t('act.members')}</legend>
          <div class="checks">
            {memberOptions().map((m) => (
              <label key={m.id}>
                <input
                  type="checkbox"
                  checked={a.member_ids.includes(m.id)}
                  onChange={() =>
                    props.onChange({ ...a, member_ids: a.member_ids.includes(m.id) ? a.member_ids.filter((x) => x !== m.id) : [...a.member_ids, m.id] })
                  }
                />
                {m.name}
              </label>
            ))}
          </div>
        </fieldset>
      );
    default:
      return null;
  }
}
