// Settings › Automation: the rules in the order they run (on/off, move up/down, last run), a rule's
// editor at /settings/automation/{id} (new: /settings/automation/new), and the runs of the last 30
// days at /settings/automation/runs.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must } from '../../api';
import { describeTrigger, loadOptions, optionsLoaded, type Rule } from '../../automation';
import { DataTable, LoadedList } from '../../components/DataTable';
import { Loading } from '../../components/Loading';
import { absoluteTime, relativeTime, t } from '../../i18n';
import { toast } from '../../state';
import { RuleEditor } from './RuleEditor';
import { RunsLog } from './RunsLog';

export function AutomationSettings(props: { id: string | undefined }) {
  const [optionsError, setOptionsError] = useState<string | null>(null);
  const load = () =>
    loadOptions().then(
      () => setOptionsError(null),
      (e) => setOptionsError(errorText(e)),
    );
  useEffect(() => void load(), []);
  const tab = props.id === 'runs' ? 'runs' : 'rules';
  if (props.id && props.id !== 'runs') {
    return optionsLoaded.value ? <RuleEditor id={props.id} /> : <Loading error={optionsError} retry={load} />;
  }
  return (
    <>
      <h1>{t('auto.title')}</h1>
      <p class="lead">{t('auto.lead')}</p>
      <nav class="auto-tabs" aria-label={t('auto.tabs')}>
        <a class="auto-tab" href="/settings/automation" aria-current={tab === 'rules' ? 'page' : undefined}>
          {t('auto.tab_rules')}
        </a>
        <a class="auto-tab" href="/settings/automation/runs" aria-current={tab === 'runs' ? 'page' : undefined}>
          {t('auto.tab_runs')}
        </a>
      </nav>
      {tab === 'runs' ? <RunsLog /> : <RuleList />}
    </>
  );
}

async function fetchRules(): Promise<Rule[]> {
  const res = await must(api.GET('/v1/automation/rules'));
  return (res.data as Rule[]).slice().sort((a, b) => a.position - b.position);
}

function RuleList() {
  const [rules, setRules] = useState<Rule[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const reload = () =>
    fetchRules().then(
      (r) => (setRules(r), setError(null)),
      (e) => setError(errorText(e)),
    );
  useEffect(() => void reload(), []);

  async function patch(rule: Rule, body: { enabled?: boolean; position?: number }, done: string, focusId?: string) {
    setBusy(true);
    try {
      await must(api.PATCH('/v1/automation/rules/{ruleId}', { params: { path: { ruleId: rule.id } }, body }));
      await reload();
      toast(done);
    } catch (e) {
      toast(t('action.failed', { error: errorText(e) }));
    } finally {
      setBusy(false);
      if (focusId) requestAnimationFrame(() => document.getElementById(focusId)?.focus());
    }
  }

  const move = (rules: Rule[], i: number, by: -1 | 1) => {
    const rule = rules[i];
    const to = i + by;
    // The focus stays on the moved rule: its button in the same direction, or the other at an end.
    const edge = to === 0 || to === rules.length - 1;
    const dir = edge ? (by < 0 ? 'down' : 'up') : by < 0 ? 'up' : 'down';
    void patch(rule, { position: rules[to].position }, t('auto.moved', { name: rule.name, n: to + 1 }), `rule-${rule.id}-${dir}`);
  };

  return (
    <section aria-labelledby="rules-title">
      <div class="auto-head">
        <h2 id="rules-title">{t('auto.tab_rules')}</h2>
        <a class="btn btn-primary auto-link-btn" href="/settings/automation/new">
          + {t('auto.new')}
        </a>
      </div>
      <LoadedList rows={rules} error={error} retry={reload} empty={t('auto.empty')}>
        {(rows) => (
          <DataTable
            label={t('auto.table')}
            testId="rules"
            columns={[t('auto.col_order'), t('auto.col_name'), t('auto.col_on'), t('auto.col_last_run'), { hidden: t('auto.col_actions') }]}
          >
            {rows.map((r, i) => (
              <tr key={r.id}>
                <td class="auto-order">
                  <span class="auto-order-n">{i + 1}</span>
                  <button
                    id={`rule-${r.id}-up`}
                    class="btn btn-ghost btn-icon"
                    type="button"
                    disabled={busy || i === 0}
                    aria-label={t('auto.move_up_named', { name: r.name })}
                    title={t('auto.move_up_named', { name: r.name })}
                    onClick={() => move(rows, i, -1)}
                  >
                    ↑
                  </button>
                  <button
                    id={`rule-${r.id}-down`}
                    class="btn btn-ghost btn-icon"
                    type="button"
                    disabled={busy || i === rows.length - 1}
                    aria-label={t('auto.move_down_named', { name: r.name })}
                    title={t('auto.move_down_named', { name: r.name })}
                    onClick={() => move(rows, i, 1)}
                  >
                    ↓
                  </button>
                </td>
                <td>
                  <a href={`/settings/automation/${r.id}`} class="auto-rule-name">
                    {r.name}
                  </a>
                  <div class="muted auto-when">{t('auto.when', { trigger: describeTrigger(r.trigger) })}</div>
                </td>
                <td>
                  <label class="switch">
                    <input
                      id={`rule-${r.id}-on`}
                      type="checkbox"
                      role="switch"
                      checked={r.enabled}
                      aria-checked={r.enabled}
                      disabled={busy}
                      aria-label={t('auto.enabled_named', { name: r.name })}
                      onChange={(e) =>
                        void patch(
                          r,
                          { enabled: e.currentTarget.checked },
                          t(e.currentTarget.checked ? 'auto.turned_on' : 'auto.turned_off', { name: r.name }),
                          `rule-${r.id}-on`,
                        )
                      }
                    />
                    <span aria-hidden="true">{r.enabled ? t('auto.status_on') : t('auto.status_off')}</span>
                  </label>
                </td>
                <td>
                  {r.last_run_at ? (
                    <time title={absoluteTime(r.last_run_at)}>{relativeTime(r.last_run_at)}</time>
                  ) : (
                    <span class="muted">{t('auto.never')}</span>
                  )}
                </td>
                <td>
                  <a class="btn auto-link-btn" href={`/settings/automation/${r.id}`} aria-label={t('auto.edit_named', { name: r.name })}>
                    {t('auto.edit')}
                  </a>
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </LoadedList>
    </section>
  );
}
