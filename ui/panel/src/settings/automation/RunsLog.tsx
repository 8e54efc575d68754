// The runs of the last 30 days, newest first: which rule, which conversation, what it did or why it
// did nothing; filtered by rule; older pages on request.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must } from '../../api';
import { describeActions, type Rule } from '../../automation';
import { DataTable, LoadedList } from '../../components/DataTable';
import { absoluteTime, conversationTitle, type MessageKey, relativeTime, t } from '../../i18n';

type Run = {
  id: string;
  rule_id: string;
  rule_name: string;
  conversation_id: string;
  trigger: string;
  outcome: 'acted' | 'no_match' | 'skipped';
  reason: string | null;
  actions: unknown[];
  created_at: string;
};

/** A reason in words when the panel knows its code ("loop_guard: depth 3 reached" → loop_guard), else as the server wrote it. */
function reasonText(reason: string | null): string {
  if (!reason) return '';
  const code = reason.split(':')[0].trim();
  return t(`runs.reason.${code}` as MessageKey) ?? reason;
}

export function resultText(run: Pick<Run, 'outcome' | 'reason' | 'actions'>): string {
  if (run.outcome === 'acted') return run.actions.length ? t('runs.acted', { actions: describeActions(run.actions) }) : t('runs.acted_none');
  if (run.outcome === 'no_match') return reasonText(run.reason ?? 'conditions_not_met');
  return t('runs.skipped', { reason: reasonText(run.reason) });
}

/** The conversations' titles for the links (one read each, once per page of runs). */
function useTitles(ids: string[]): Record<string, string> {
  const [titles, setTitles] = useState<Record<string, string>>({});
  const key = [...new Set(ids)].sort().join(',');
  useEffect(() => {
    const missing = key.split(',').filter((id) => id && !(id in titles));
    for (const id of missing) {
      void api.GET('/v1/conversations/{conversationId}', { params: { path: { conversationId: id } } }).then((r) => {
        if (r.data) setTitles((old) => ({ ...old, [id]: conversationTitle(r.data) }));
      });
    }
  }, [key]);
  return titles;
}

export function RunsLog() {
  const [ruleId, setRuleId] = useState('');
  const [rules, setRules] = useState<Rule[]>([]);
  const [runs, setRuns] = useState<Run[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const titles = useTitles((runs ?? []).map((r) => r.conversation_id));

  async function load(cursor?: string) {
    const res = await must(api.GET('/v1/automation/runs', { params: { query: { rule_id: ruleId || undefined, cursor, limit: 50 } } }));
    setNext(res.next_cursor ?? null);
    return res.data as Run[];
  }
  const reload = () =>
    load().then(
      (rows) => (setRuns(rows), setError(null)),
      (e) => setError(errorText(e)),
    );
  useEffect(() => {
    setRuns(null);
    void reload();
  }, [ruleId]);
  useEffect(() => {
    void must(api.GET('/v1/automation/rules')).then(
      (r) => setRules((r.data as Rule[]).slice().sort((a, b) => a.position - b.position)),
      () => {},
    );
  }, []);

  return (
    <section aria-labelledby="runs-title">
      <h2 id="runs-title">{t('runs.title')}</h2>
      <div class="field auto-runs-filter">
        <label for="runs-rule">{t('runs.rule')}</label>
        <select id="runs-rule" class="select" value={ruleId} onChange={(e) => setRuleId(e.currentTarget.value)}>
          <option value="">{t('runs.all_rules')}</option>
          {rules.map((r) => (
            <option key={r.id} value={r.id}>
              {r.name}
            </option>
          ))}
        </select>
      </div>
      <LoadedList rows={runs} error={error} retry={reload} empty={t('runs.empty')}>
        {(rows) => (
          <>
            <DataTable
              label={t('runs.table')}
              testId="runs"
              columns={[t('runs.col_when'), t('runs.col_rule'), t('runs.col_conversation'), t('runs.col_result')]}
            >
              {rows.map((r) => (
                <tr key={r.id} class={`auto-run auto-run-${r.outcome}`}>
                  <td>
                    <time title={absoluteTime(r.created_at)}>{relativeTime(r.created_at)}</time>
                  </td>
                  <td>{rules.some((x) => x.id === r.rule_id) ? <a href={`/settings/automation/${r.rule_id}`}>{r.rule_name}</a> : r.rule_name}</td>
                  <td>
                    <a href={`/conversations/${r.conversation_id}`}>{titles[r.conversation_id] ?? r.conversation_id}</a>
                  </td>
                  <td>
                    <span class={`auto-outcome auto-outcome-${r.outcome}`}>{resultText(r)}</span>
                  </td>
                </tr>
              ))}
            </DataTable>
            {next && (
              <p>
                <button
                  class="btn"
                  type="button"
                  disabled={loadingMore}
                  onClick={async () => {
                    setLoadingMore(true);
                    try {
                      const more = await load(next);
                      setRuns([...rows, ...more]);
                    } catch (e) {
                      setError(errorText(e));
                    } finally {
                      setLoadingMore(false);
                    }
                  }}
                >
                  {t('runs.more')}
                </button>
              </p>
            )}
          </>
        )}
      </LoadedList>
    </section>
  );
}
