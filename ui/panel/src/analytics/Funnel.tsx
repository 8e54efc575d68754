// The conversation funnel (GET /v1/analytics/funnel): visitors → opened the chat → started a
// conversation → resolved → rated, by source, campaign or page ("pages that start conversations"),
// under the dashboard's filters (but custom events and exit pages, which the funnel cannot apply:
// named under the card).
import { useState } from 'preact/hooks';
import { api, must } from '../api';
import { DataTable } from '../components/DataTable';
import { Loading, useLoad } from '../components/Loading';
import { locale, t } from '../i18n';
import { filterText } from './Breakdowns';
import { filterParam, type Scope } from './query';

type By = 'source' | 'campaign' | 'page';
const BY: By[] = ['source', 'campaign', 'page'];
/** Dimensions the funnel refuses (GET /v1/analytics/funnel): a conversation's visit has no counterpart. */
const UNFILTERABLE = new Set(['event:name', 'visit:exit_page']);

export function Funnel(props: { scope: Scope }) {
  const { propertyId, period } = props.scope;
  const [by, setBy] = useState<By>('source');
  const applied = props.scope.filters.filter((f) => !UNFILTERABLE.has(f.dimension));
  const left = props.scope.filters.filter((f) => UNFILTERABLE.has(f.dimension));
  const filters = filterParam(applied);
  const { data, error, reload } = useLoad(
    () => must(api.GET('/v1/analytics/funnel', { params: { query: { property_id: propertyId, period, by, ...(filters ? { filters } : {}) } } })),
    [propertyId, period, by, filters],
  );
  const n = (x: number) => x.toLocaleString(locale.value);
  const none = by === 'source' ? t('analytics.direct') : t('analytics.none');
  return (
    <section class="card analytics-funnel">
      <h2 style={{ marginTop: 0 }}>{t('analytics.funnel')}</h2>
      <div class="field">
        <label for="funnel-by">{t('analytics.funnel_by')}</label>
        <select id="funnel-by" class="select" value={by} onChange={(e) => setBy(e.currentTarget.value as By)}>
          {BY.map((b) => (
            <option key={b} value={b}>
              {t(`analytics.by_${b}`)}
            </option>
          ))}
        </select>
      </div>
      {!data ? (
        <Loading error={error} retry={reload} />
      ) : data.results.length === 0 ? (
        <p class="muted">{t('analytics.none_yet')}</p>
      ) : (
        <DataTable
          label={t('analytics.funnel')}
          columns={[
            t(`analytics.by_${by}`),
            t('analytics.visitors'),
            t('analytics.chat_opened'),
            t('analytics.conversations'),
            t('analytics.resolved'),
            t('analytics.rated'),
          ]}
        >
          {data.results.map((r) => (
            <tr key={String(r.value)}>
              <th scope="row">{r.value ?? none}</th>
              <td>{n(r.visitors)}</td>
              <td>{n(r.chat_opened)}</td>
              <td>{n(r.conversations)}</td>
              <td>{n(r.resolved)}</td>
              <td>{n(r.rated)}</td>
            </tr>
          ))}
        </DataTable>
      )}
      {left.length > 0 && <p class="muted">{t('analytics.funnel_unfiltered', { filters: left.map(filterText).join(', ') })}</p>}
    </section>
  );
}
