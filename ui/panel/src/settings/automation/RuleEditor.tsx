// One rule: its name, trigger, conditions and actions; the problems that stop it from being saved,
// named before anything is sent; the dry run on past conversations; and the switch, which turns a
// rule on only once the person has seen what its saved version would have done.
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, errorText, must } from '../../api';
import {
  type Action,
  ActionsBuilder,
  actionBody,
  actionProblem,
  type Conditions,
  conditionBody,
  conditionProblem,
  type Rule,
  TRIGGER_AMOUNT,
  type Trigger,
  triggerAmount,
} from '../../automation';
import { Confirm } from '../../components/Confirm';
import { FormError } from '../../components/FormError';
import { Loading, useLoad } from '../../components/Loading';
import { type MessageKey, t } from '../../i18n';
import { toast } from '../../state';
import { ConditionsBuilder, TriggerField } from './ConditionsBuilder';
import { DryRun } from './DryRun';

type Draft = { name: string; trigger: Trigger; conditions: Conditions; actions: Action[] };
const NEW: Draft = { name: '', trigger: { type: 'customer_message' }, conditions: { match: 'all', items: [] }, actions: [] };

const fromRule = (r: Rule): Draft => ({ name: r.name, trigger: r.trigger, conditions: r.conditions, actions: r.actions });
/** What the API takes: trimmed text, no value where a test has none. */
const toBody = (d: Draft) => ({
  name: d.name.trim(),
  trigger: d.trigger,
  conditions: { match: d.conditions.match, items: d.conditions.items.map(conditionBody) },
  actions: d.actions.map(actionBody),
});
const same = (a: Draft, b: Draft) => JSON.stringify(toBody(a)) === JSON.stringify(toBody(b));

/** Everything that keeps the draft from being saved, in the person's words. */
export function draftProblems(d: Draft): string[] {
  const out: string[] = [];
  if (!d.name.trim()) out.push(t('auto.problem.name'));
  const spec = TRIGGER_AMOUNT[d.trigger.type];
  const amount = triggerAmount(d.trigger);
  if (spec && (amount === null || !Number.isInteger(amount) || amount < 1 || amount > spec.max)) out.push(t('auto.problem.amount', { max: spec.max }));
  d.conditions.items.forEach((c, i) => {
    const p = conditionProblem(c);
    if (p) out.push(t('auto.problem.condition', { n: i + 1, problem: t(`auto.problem.${p}` as MessageKey) }));
  });
  if (!d.actions.length) out.push(t('auto.problem.no_actions'));
  d.actions.forEach((a, i) => {
    const p = actionProblem(a);
    if (p) out.push(t('auto.problem.action', { n: i + 1, problem: t(`auto.problem.${p}` as MessageKey) }));
  });
  return out;
}

export function RuleEditor(props: { id: string }) {
  const isNew = props.id === 'new';
  const { data, error, reload } = useLoad(
    () => (isNew ? Promise.resolve(null) : must(api.GET('/v1/automation/rules/{ruleId}', { params: { path: { ruleId: props.id } } })).then((r) => r as Rule)),
    [props.id],
  );
  if (!isNew && !data) return <Loading error={error} retry={reload} />;
  return <RuleForm key={props.id} rule={isNew ? null : data} onSaved={reload} />;
}

function RuleForm(props: { rule: Rule | null; onSaved: () => Promise<void> }) {
  const { route } = useLocation();
  const [rule, setRule] = useState<Rule | null>(props.rule);
  const saved = rule ? fromRule(rule) : NEW;
  const [draft, setDraft] = useState<Draft>(saved);
  const [showProblems, setShowProblems] = useState(false);
  const [saveError, setSaveError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [deleting, setDeleting] = useState(false);
  /** The saved version a dry run answered for: the switch may turn that version on. */
  const [tried, setTried] = useState<string | null>(null);
  const problemsRef = useRef<HTMLDivElement>(null);
  const dirty = !rule || !same(draft, saved);
  const problems = draftProblems(draft);
  const savedKey = rule ? `${rule.id}@${rule.updated_at}` : null;
  useEffect(() => setRule(props.rule), [props.rule]);

  /** Saves the draft (a new rule off); answers the saved rule, or null when it could not. */
  async function save(): Promise<Rule | null> {
    setSaveError(null);
    if (problems.length) {
      setShowProblems(true);
      requestAnimationFrame(() => problemsRef.current?.focus());
      return null;
    }
    setBusy(true);
    try {
      // The draft's shapes are the API's (automation/model.ts), but the generated body types spell
      // the empty values of some conditions as intersections TypeScript will not match them to.
      const body = toBody(draft);
      const next = rule
        ? ((await must(
            api.PATCH('/v1/automation/rules/{ruleId}', {
              params: { path: { ruleId: rule.id } },
              body: body as never,
            }),
          )) as Rule)
        : ((await must(api.POST('/v1/automation/rules', { body: { ...body, enabled: false } as never }))) as Rule);
      setRule(next);
      setDraft(fromRule(next));
      setShowProblems(false);
      toast(rule ? t('auto.saved') : t('auto.created'));
      if (!rule) history.replaceState(null, '', `/settings/automation/${next.id}`);
      return next;
    } catch (e) {
      setSaveError(errorText(e));
      return null;
    } finally {
      setBusy(false);
    }
  }

  async function setEnabled(enabled: boolean) {
    if (!rule) return;
    setBusy(true);
    try {
      const next = (await must(api.PATCH('/v1/automation/rules/{ruleId}', { params: { path: { ruleId: rule.id } }, body: { enabled } }))) as Rule;
      setRule(next);
      setTried(`${next.id}@${next.updated_at}`);
      toast(t(enabled ? 'auto.turned_on' : 'auto.turned_off', { name: next.name }));
    } catch (e) {
      toast(t('action.failed', { error: errorText(e) }));
    } finally {
      setBusy(false);
    }
  }

  const mayTurnOn = !!rule && !dirty && (rule.enabled || tried === savedKey);
  return (
    <>
      <p>
        <a href="/settings/automation">← {t('auto.back')}</a>
      </p>
      <h1>{rule ? t('auto.edit_title', { name: rule.name }) : t('auto.new_title')}</h1>
      <div class="card auto-switch-card">
        <label class="switch">
          <input
            type="checkbox"
            role="switch"
            checked={rule?.enabled ?? false}
            aria-checked={rule?.enabled ?? false}
            disabled={busy || !mayTurnOn}
            aria-describedby="rule-switch-hint"
            onChange={(e) => void setEnabled(e.currentTarget.checked)}
          />
          <span>{t('auto.switch')}</span>
        </label>
        {!mayTurnOn && (
          <span class="hint" id="rule-switch-hint">
            {dirty && rule ? t('auto.switch_dirty') : t('auto.switch_hint')}
          </span>
        )}
      </div>
      <form
        class="card auto-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <div class="field">
          <label for="rule-name">{t('auto.name')}</label>
          <input
            id="rule-name"
            class="input"
            maxLength={100}
            value={draft.name}
            aria-describedby="rule-name-hint"
            onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })}
          />
          <span class="hint" id="rule-name-hint">
            {t('auto.name_hint')}
          </span>
        </div>
        <fieldset class="auto-part">
          <legend>{t('auto.trigger')}</legend>
          <TriggerField trigger={draft.trigger} onChange={(trigger) => setDraft({ ...draft, trigger })} />
        </fieldset>
        <fieldset class="auto-part">
          <legend>{t('auto.conditions')}</legend>
          <ConditionsBuilder conditions={draft.conditions} onChange={(conditions) => setDraft({ ...draft, conditions })} />
        </fieldset>
        <fieldset class="auto-part">
          <legend>{t('auto.actions')}</legend>
          <ActionsBuilder id="rule-act" actions={draft.actions} onChange={(actions) => setDraft({ ...draft, actions })} />
        </fieldset>
        {showProblems && problems.length > 0 && (
          <div class="auto-problems" role="alert" tabIndex={-1} ref={problemsRef}>
            <strong>{t('auto.problems')}</strong>
            <ul>
              {problems.map((p) => (
                <li key={p}>{p}</li>
              ))}
            </ul>
          </div>
        )}
        <FormError error={saveError} />
        <div class="auto-buttons">
          <button class="btn btn-primary" type="submit" disabled={busy}>
            {rule ? t('auto.save') : t('auto.save_new')}
          </button>
          {rule && (
            <button class="btn btn-danger" type="button" onClick={() => setDeleting(true)}>
              {t('auto.delete')}
            </button>
          )}
        </div>
      </form>
      <DryRun
        ruleId={rule?.id ?? null}
        dirty={dirty}
        enabled={rule?.enabled ?? false}
        busy={busy}
        saveFirst={save}
        onAnswered={(r) => setTried(`${r.id}@${r.updated_at}`)}
        onTurnOn={() => void setEnabled(true)}
      />
      {deleting && rule && (
        <Confirm
          title={t('auto.delete_named', { name: rule.name })}
          lead={t('auto.delete_lead', { name: rule.name })}
          action={t('auto.delete')}
          onClose={() => setDeleting(false)}
          onConfirm={async () => {
            try {
              await must(api.DELETE('/v1/automation/rules/{ruleId}', { params: { path: { ruleId: rule.id } } }));
              setDeleting(false);
              toast(t('auto.deleted'));
              route('/settings/automation');
            } catch (err) {
              toast(t('action.failed', { error: errorText(err) }));
            }
          }}
        />
      )}
    </>
  );
}
