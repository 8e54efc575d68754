// "Try on past conversations": the saved rule evaluated against the last N days (nothing changes),
// answered in plain words — "Would have matched 37 of 210 conversations: assign to Support ×30, add
// label ‘billing’ ×37" — with example conversations to open.
import { useState } from 'preact/hooks';
import { api, errorText, must } from '../../api';
import { describeActions, describeSummary, type Rule } from '../../automation';
import { FormError } from '../../components/FormError';
import { t } from '../../i18n';

type Answer = {
  evaluated: number;
  matched: number;
  summary: { action: unknown; count: number }[];
  examples: { conversation_id: string; subject: string | null; actions: unknown[] }[];
};
const DAYS = [7, 30, 90];

export function DryRun(props: {
  ruleId: string | null;
  dirty: boolean;
  enabled: boolean;
  busy: boolean;
  saveFirst: () => Promise<Rule | null>;
  onAnswered: (rule: Rule) => void;
  onTurnOn: () => void;
}) {
  const [days, setDays] = useState(30);
  const [answer, setAnswer] = useState<(Answer & { days: number }) | null>(null);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function run() {
    setError(null);
    // The dry run evaluates the saved rule: unsaved changes are saved first (a new rule stays off).
    let rule: Rule | null = null;
    if (props.dirty || !props.ruleId) {
      rule = await props.saveFirst();
      if (!rule) return;
    }
    const ruleId = rule?.id ?? props.ruleId!;
    setRunning(true);
    try {
      const res = (await must(api.POST('/v1/automation/rules/{ruleId}/dry-run', { params: { path: { ruleId } }, body: { days } }))) as Answer;
      setAnswer({ ...res, days });
      const current = rule ?? ((await must(api.GET('/v1/automation/rules/{ruleId}', { params: { path: { ruleId } } }))) as Rule);
      props.onAnswered(current);
      requestAnimationFrame(() => document.getElementById('dry-answer')?.focus());
    } catch (e) {
      setError(errorText(e));
    } finally {
      setRunning(false);
    }
  }

  const stale = answer && props.dirty;
  return (
    <section class="card" aria-labelledby="dry-title">
      <h2 id="dry-title" style={{ marginTop: 0 }}>
        {t('dry.title')}
      </h2>
      <p class="muted">{t('dry.lead')}</p>
      <div class="auto-buttons auto-dry-form">
        <div class="field">
          <label for="dry-days">{t('dry.days')}</label>
          <select id="dry-days" class="select" value={days} onChange={(e) => setDays(Number(e.currentTarget.value))}>
            {DAYS.map((d) => (
              <option key={d} value={d}>
                {t('dry.days_n', { n: d })}
              </option>
            ))}
          </select>
        </div>
        <button class="btn" type="button" disabled={running || props.busy} onClick={() => void run()}>
          {running ? t('dry.running') : props.dirty || !props.ruleId ? t('dry.save_and_run') : t('dry.run')}
        </button>
      </div>
      <FormError error={error} />
      {answer && !stale && (
        <div id="dry-answer" class="auto-answer" role="status" tabIndex={-1}>
          <p class="auto-answer-text">
            {answer.matched === 0
              ? t('dry.none', { evaluated: answer.evaluated, days: answer.days })
              : answer.summary.length
                ? t('dry.matched_actions', { matched: answer.matched, evaluated: answer.evaluated, actions: describeSummary(answer.summary) })
                : t('dry.matched', { matched: answer.matched, evaluated: answer.evaluated })}
          </p>
          {answer.examples.length > 0 && (
            <>
              <h3>{t('dry.examples')}</h3>
              <ul class="auto-examples">
                {answer.examples.map((x) => (
                  <li key={x.conversation_id}>
                    <a href={`/conversations/${x.conversation_id}`}>{x.subject || x.conversation_id}</a>{' '}
                    <span class="muted">— {t('dry.example_actions', { actions: describeActions(x.actions) })}</span>
                  </li>
                ))}
              </ul>
            </>
          )}
          {!props.enabled && (
            <p>
              <button class="btn btn-primary" type="button" disabled={props.busy} onClick={props.onTurnOn}>
                {t('dry.turn_on')}
              </button>
            </p>
          )}
        </div>
      )}
    </section>
  );
}
