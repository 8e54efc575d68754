// The analytics dashboard (/analytics): a website and a period; visitors, pageviews, visits, bounce
// rate and visit duration with their change against the previous period; visitors and pageviews per
// day (uPlot, loaded with this page only) with its CSV; the breakdown cards (./Breakdowns.tsx), whose
// rows filter the whole page; the visitors of the last 5 minutes; and, for owners and admins, the
// websites counted and the month's usage.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, must, type Schemas } from '../api';
import { Loading, useLoad } from '../components/Loading';
import { calendarDay, durationText, shortCalendarDay, t } from '../i18n';
import { membership } from '../state';
import { Breakdowns, filterText } from './Breakdowns';
import { Funnel } from './Funnel';
import { Properties, UsageBanner } from './Properties';
import { exportHref, type Filter, number, PERIODS, type Period, type Row, type Scope, scopeKey, stats } from './query';

type Property = Schemas['AnalyticsProperty'];

function Totals(props: { scope: Scope }) {
  const { data, error, reload } = useLoad(
    () => stats(props.scope, { metrics: 'visitors,pageviews,visits,bounce_rate,visit_duration', compare: 'previous_period' }),
    [scopeKey(props.scope)],
  );
  if (!data) return <Loading error={error} retry={reload} />;
  const r = data.results as Record<string, { value: number; change?: number | null }>;
  const items: [string, string, number | null | undefined][] = [
    [t('analytics.visitors'), number(r.visitors.value), r.visitors.change],
    [t('analytics.pageviews'), number(r.pageviews.value), r.pageviews.change],
    [t('analytics.visits'), number(r.visits.value), r.visits.change],
    [t('analytics.bounce_rate'), `${r.bounce_rate.value}%`, r.bounce_rate.change],
    [t('analytics.visit_duration'), durationText(r.visit_duration.value), r.visit_duration.change],
  ];
  return (
    <dl class="card report-totals analytics-totals" data-testid="analytics-totals">
      {items.map(([k, v, change]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>
            {v}
            {change != null && <small class="muted analytics-change">{t('analytics.vs_previous', { change: `${change > 0 ? '+' : ''}${change}%` })}</small>}
          </dd>
        </div>
      ))}
    </dl>
  );
}

function Chart(props: { scope: Scope }) {
  const box = useRef<HTMLDivElement>(null);
  const daily = { metrics: 'visitors,pageviews', dimension: 'time:day' };
  const { data, error, reload } = useLoad(() => stats(props.scope, daily), [scopeKey(props.scope)]);
  const rows = (data?.results ?? []) as Row[];
  useEffect(() => {
    const el = box.current;
    if (!el || !rows.length) return;
    const dayOf = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);
    const width = () => Math.max(260, el.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: 220,
        series: [
          { label: t('reports.day'), value: (_u, s) => (s == null ? '—' : calendarDay(dayOf(s))) },
          { label: t('analytics.visitors'), stroke: '#2563eb', width: 2 },
          { label: t('analytics.pageviews'), stroke: '#16a34a', width: 2 },
        ],
        axes: [{ stroke: 'currentColor', values: (_u, splits) => splits.map((s) => shortCalendarDay(dayOf(s))) }, { stroke: 'currentColor' }],
        scales: { x: { time: true } },
        tzDate: (s) => uPlot.tzDate(new Date(s * 1000), 'Etc/UTC'),
      },
      [rows.map((r) => Date.parse(`${r.date}T00:00:00Z`) / 1000), rows.map((r) => Number(r.visitors)), rows.map((r) => Number(r.pageviews))],
      el,
    );
    const observer = new ResizeObserver(() => plot.setSize({ width: width(), height: 220 }));
    observer.observe(el);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [JSON.stringify(rows)]);
  if (!data) return <Loading error={error} retry={reload} />;
  return (
    <figure class="card report-chart" style={{ margin: '0 0 var(--space-4)' }}>
      <figcaption class="analytics-breakdown-head">
        <h2>{t('analytics.chart_label')}</h2>
        <a class="btn btn-ghost analytics-csv" href={exportHref(props.scope, daily)} download>
          {t('analytics.export')}
          <span class="visually-hidden"> ({t('analytics.chart_label')})</span>
        </a>
      </figcaption>
      <div ref={box} role="img" aria-label={t('analytics.chart_label')} />
    </figure>
  );
}

function Realtime(props: { propertyId: string }) {
  const [count, setCount] = useState<number | null>(null);
  useEffect(() => {
    let live = true;
    const load = () =>
      api.GET('/v1/analytics/realtime', { params: { query: { property_id: props.propertyId } } }).then((r) => {
        if (live && r.data) setCount(r.data.visitors);
      });
    void load();
    const timer = setInterval(() => void load(), 30_000);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [props.propertyId]);
  if (count === null) return null;
  return (
    <p class="analytics-realtime" role="status" data-testid="analytics-realtime">
      <span class="analytics-dot" aria-hidden="true" /> {t('analytics.realtime', { count: number(count) })}
    </p>
  );
}

/** The filters chosen from the breakdowns, each removable; the figures above and below follow them. */
function Filters(props: { filters: Filter[]; onChange: (filters: Filter[]) => void }) {
  if (!props.filters.length) return null;
  return (
    <section class="analytics-filters" aria-label={t('analytics.filters')}>
      <ul>
        {props.filters.map((f, i) => (
          <li key={`${f.dimension}=${f.value}`} class="chip">
            {filterText(f)}
            <button
              type="button"
              class="btn btn-ghost btn-icon"
              aria-label={t('analytics.remove_filter', { filter: filterText(f) })}
              onClick={() => props.onChange(props.filters.filter((_, j) => j !== i))}
            >
              ×
            </button>
          </li>
        ))}
      </ul>
      {props.filters.length > 1 && (
        <button type="button" class="btn btn-ghost" onClick={() => props.onChange([])}>
          {t('analytics.clear_filters')}
        </button>
      )}
    </section>
  );
}

export function Dashboard() {
  const manager = membership.value?.role === 'owner' || membership.value?.role === 'admin';
  const list = useLoad(() => must(api.GET('/v1/analytics/properties')));
  const [chosen, setChosen] = useState('');
  const [period, setPeriod] = useState<Period>('30d');
  const [filters, setFilters] = useState<Filter[]>([]);
  const properties: Property[] = list.data?.data ?? [];
  const property = properties.find((p) => p.id === chosen) ?? properties[0];
  const scope: Scope = { propertyId: property?.id ?? '', period, filters };
  return (
    <main class="settings-main reports analytics" id="main" tabIndex={-1}>
      <p>
        <a href="/conversations">← {t('settings.back')}</a>
      </p>
      <h1>{t('analytics.title')}</h1>
      {manager && <UsageBanner />}
      {!list.data ? (
        <Loading error={list.error} retry={list.reload} />
      ) : !property ? (
        <p class="empty">{manager ? t('analytics.no_properties') : t('analytics.no_properties_agent')}</p>
      ) : (
        <>
          <form class="card report-filters" onSubmit={(e) => e.preventDefault()}>
            <div class="field">
              <label for="analytics-property">{t('analytics.property')}</label>
              <select
                id="analytics-property"
                class="select"
                value={property.id}
                onChange={(e) => {
                  setChosen(e.currentTarget.value);
                  setFilters([]);
                }}
              >
                {properties.map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.name === p.domain ? p.domain : `${p.name} (${p.domain})`}
                  </option>
                ))}
              </select>
            </div>
            <div class="field">
              <label for="analytics-period">{t('analytics.period')}</label>
              <select id="analytics-period" class="select" value={period} onChange={(e) => setPeriod(e.currentTarget.value as Period)}>
                {PERIODS.map((p) => (
                  <option key={p} value={p}>
                    {t(`analytics.period_${p}`)}
                  </option>
                ))}
              </select>
            </div>
          </form>
          <Realtime propertyId={property.id} />
          <Filters filters={filters} onChange={setFilters} />
          <Totals scope={scope} />
          <Chart scope={scope} />
          <Breakdowns scope={scope} onFilter={(f) => setFilters([...filters, f])} />
          <Funnel scope={scope} />
        </>
      )}
      {manager && list.data && <Properties properties={properties} onChanged={() => void list.reload()} />}
    </main>
  );
}

export default Dashboard;
