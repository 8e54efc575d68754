// The dashboard's breakdown cards: pages (top, entry, exit), sources (sources, referrers, UTM),
// locations (countries, regions, cities), devices (types, browsers, systems) and custom events, each
// with tabs (the ARIA tabs pattern: one Tab stop, arrows between tabs), the top 10 rows, and a CSV
// of all rows. Choosing a row filters the whole dashboard by it.
import { useState } from 'preact/hooks';
import { DataTable } from '../components/DataTable';
import { Loading, useLoad } from '../components/Loading';
import { t } from '../i18n';
import { exportHref, type Filter, number, type Row, type Scope, scopeKey, stats } from './query';
import { countryName } from './VisitCard';

type Key = Parameters<typeof t>[0];
interface Tab {
  dimension: string;
  label: Key;
  show?: (v: string | null) => string;
  /** Rows of this tab are left out by this filter (the API's syntax). */
  without?: string;
}

const deviceLabel = (v: string | null) => (v === 'desktop' || v === 'mobile' || v === 'tablet' ? t(`analytics.device_${v}`) : t('analytics.unknown'));
const orUnknown = (v: string | null) => v ?? t('analytics.unknown');

const CARDS: { id: string; title: Key; tabs: Tab[] }[] = [
  {
    id: 'pages',
    title: 'analytics.card_pages',
    tabs: [
      { dimension: 'event:page', label: 'analytics.top_pages', show: (v) => v ?? '—' },
      { dimension: 'visit:entry_page', label: 'analytics.entry_pages', show: (v) => v ?? '—' },
      { dimension: 'visit:exit_page', label: 'analytics.exit_pages', show: (v) => v ?? '—' },
    ],
  },
  {
    id: 'sources',
    title: 'analytics.card_sources',
    tabs: [
      { dimension: 'visit:source', label: 'analytics.top_sources', show: (v) => v ?? t('analytics.direct') },
      { dimension: 'visit:referrer', label: 'analytics.referrers', show: (v) => v ?? t('analytics.direct') },
      { dimension: 'visit:utm_medium', label: 'analytics.utm_medium', show: (v) => v ?? t('analytics.none') },
      { dimension: 'visit:utm_campaign', label: 'analytics.utm_campaign', show: (v) => v ?? t('analytics.none') },
    ],
  },
  {
    id: 'locations',
    title: 'analytics.card_locations',
    tabs: [
      { dimension: 'visit:country', label: 'analytics.countries', show: countryName },
      { dimension: 'visit:region', label: 'analytics.regions', show: orUnknown },
      { dimension: 'visit:city', label: 'analytics.cities', show: orUnknown },
    ],
  },
  {
    id: 'devices',
    title: 'analytics.card_devices',
    tabs: [
      { dimension: 'visit:device', label: 'analytics.devices', show: deviceLabel },
      { dimension: 'visit:browser', label: 'analytics.browsers', show: orUnknown },
      { dimension: 'visit:os', label: 'analytics.systems', show: orUnknown },
    ],
  },
  {
    id: 'events',
    title: 'analytics.card_events',
    tabs: [{ dimension: 'event:name', label: 'analytics.events', without: 'event:name!=pageview' }],
  },
];

/** How a dimension's value reads in a filter chip. */
export function filterText(f: Filter): string {
  for (const card of CARDS) for (const tab of card.tabs) if (tab.dimension === f.dimension) return `${t(tab.label)}: ${tab.show ? tab.show(f.value) : f.value}`;
  return `${f.dimension}: ${f.value}`;
}

function Table(props: { scope: Scope; tab: Tab; onFilter: (f: Filter) => void }) {
  const { scope, tab } = props;
  const metric = tab.dimension === 'event:name' ? 'events' : 'visitors';
  const { data, error, reload } = useLoad(
    () => stats(scope, { metrics: metric, dimension: tab.dimension, limit: '10' }, tab.without),
    [scopeKey(scope), tab.dimension],
  );
  if (!data) return <Loading error={error} retry={reload} />;
  const rows = data.results as Row[];
  if (rows.length === 0) return <p class="muted">{t('analytics.none_yet')}</p>;
  const name = tab.dimension.split(':')[1];
  const title = t(tab.label);
  return (
    <DataTable label={title} columns={[title, metric === 'events' ? t('analytics.event_count') : t('analytics.visitors')]}>
      {rows.map((r) => {
        const value = r[name] as string | null;
        const text = tab.show ? tab.show(value) : String(value);
        // Null (direct, unknown) and values with the API's separators cannot be filtered on.
        const filterable = value !== null && !/[;|]/.test(value) && !scope.filters.some((f) => f.dimension === tab.dimension);
        return (
          <tr key={String(value)}>
            <th scope="row">
              {filterable ? (
                <button
                  type="button"
                  class="analytics-filter-row"
                  title={t('analytics.filter_by', { value: text })}
                  onClick={() => props.onFilter({ dimension: tab.dimension, value })}
                >
                  {text}
                </button>
              ) : (
                text
              )}
            </th>
            <td>{number(Number(r[metric]))}</td>
          </tr>
        );
      })}
    </DataTable>
  );
}

function Card(props: { scope: Scope; card: (typeof CARDS)[number]; onFilter: (f: Filter) => void }) {
  const { card, scope } = props;
  const [chosen, setChosen] = useState(0);
  const tab = card.tabs[chosen];
  const tabId = (i: number) => `analytics-${card.id}-tab-${i}`;
  const panelId = `analytics-${card.id}-panel`;
  return (
    <section class="card analytics-breakdown">
      <header class="analytics-breakdown-head">
        <h2 id={`analytics-${card.id}-title`}>{t(card.title)}</h2>
        <a class="btn btn-ghost analytics-csv" href={exportHref(scope, { metrics: 'visitors,pageviews', dimension: tab.dimension }, tab.without)} download>
          {t('analytics.export')}
          <span class="visually-hidden"> ({t(tab.label)})</span>
        </a>
      </header>
      {card.tabs.length > 1 && (
        <div
          role="tablist"
          aria-label={t(card.title)}
          class="analytics-tabs"
          onKeyDown={(e) => {
            const step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
            if (!step) return;
            e.preventDefault();
            const next = (chosen + step + card.tabs.length) % card.tabs.length;
            setChosen(next);
            document.getElementById(tabId(next))?.focus();
          }}
        >
          {card.tabs.map((x, i) => (
            <button
              key={x.dimension}
              id={tabId(i)}
              type="button"
              role="tab"
              aria-selected={i === chosen}
              aria-controls={panelId}
              tabIndex={i === chosen ? 0 : -1}
              class="analytics-tab"
              onClick={() => setChosen(i)}
            >
              {t(x.label)}
            </button>
          ))}
        </div>
      )}
      <div id={panelId} role={card.tabs.length > 1 ? 'tabpanel' : undefined} aria-labelledby={card.tabs.length > 1 ? tabId(chosen) : undefined}>
        <Table scope={scope} tab={tab} onFilter={props.onFilter} />
      </div>
    </section>
  );
}

export function Breakdowns(props: { scope: Scope; onFilter: (f: Filter) => void }) {
  return (
    <div class="analytics-grid">
      {CARDS.map((card) => (
        <Card key={card.id} card={card} scope={props.scope} onFilter={props.onFilter} />
      ))}
    </div>
  );
}
