// Reports: per-day charts (uPlot) of a period, for all inboxes or one, all members or one, each with
// its figures as a table below (for screen readers and for reading exact values), and the
// workspace's usage per month for owners and admins. Loaded on its own (uPlot is not in the main bundle).
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, must, type Schemas } from '../api';
import { DataTable } from '../components/DataTable';
import { InboxOptions } from '../components/InboxOptions';
import { Loading, useLoad } from '../components/Loading';
import { calendarDay, calendarMonth, durationText, locale, shortCalendarDay, t } from '../i18n';
import { inboxes, membership } from '../state';
import { SlaReport } from './SlaReport';

type Report = Schemas['Report'];
type Day = Report['days'][number];

const today = () => new Date().toISOString().slice(0, 10);
const daysBefore = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
const hours = (seconds: number | null) => (seconds === null ? null : Math.round((seconds / 3600) * 10) / 10);
const hoursText = (seconds: number | null) => (seconds === null ? '—' : durationText(seconds));

interface Series {
  label: string;
  values: (number | null)[];
  color: string;
}

/** One chart: uPlot on a canvas sized to its box, redrawn when the box changes size. */
function Chart(props: { title: string; days: string[]; series: Series[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = props.days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
    // uPlot would write the days in the browser's time zone and in US style, and call the axis "Time".
    const dayOf = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);
    const width = () => Math.max(260, el.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: 220,
        series: [
          { label: t('reports.day'), value: (_u, seconds) => (seconds == null ? '—' : calendarDay(dayOf(seconds))) },
          ...props.series.map((s) => ({
            label: s.label,
            stroke: s.color,
            width: 2,
            spanGaps: true,
            value: (_u: uPlot, v: number | null) => (v == null ? '—' : v.toLocaleString(locale.value)),
          })),
        ],
        axes: [{ stroke: 'currentColor', values: (_u, splits) => splits.map((seconds) => shortCalendarDay(dayOf(seconds))) }, { stroke: 'currentColor' }],
        scales: { x: { time: true } },
        // Ticks on UTC midnights, the days the report counts.
        tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
        legend: { show: true },
      },
      [xs, ...props.series.map((s) => s.values)] as uPlot.AlignedData,
      el,
    );
    const observer = new ResizeObserver(() => plot.setSize({ width: width(), height: 220 }));
    observer.observe(el);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [props.days.join(), JSON.stringify(props.series)]);
  return (
    <figure class="card report-chart" style={{ margin: '0 0 var(--space-4)' }}>
      <figcaption>
        <h2 style={{ marginTop: 0 }}>{props.title}</h2>
      </figcaption>
      <div ref={box} role="img" aria-label={t('reports.chart_label', { title: props.title })} />
      <details>
        <summary>{t('reports.as_table')}</summary>
        <DataTable label={props.title} caption columns={[t('reports.day'), ...props.series.map((s) => s.label)]}>
          {props.days.map((d, i) => (
            <tr key={d}>
              <th scope="row">
                <time dateTime={d}>{calendarDay(d)}</time>
              </th>
              {props.series.map((s) => (
                <td key={s.label}>{s.values[i] ?? '—'}</td>
              ))}
            </tr>
          ))}
        </DataTable>
      </details>
    </figure>
  );
}

function Totals(props: { report: Report }) {
  const x = props.report.totals;
  const items: [string, string][] = [
    [t('reports.opened'), x.opened === null ? '—' : String(x.opened)],
    [t('reports.closed'), String(x.closed)],
    [t('reports.replies'), String(x.replies)],
    [t('reports.first_response_median'), hoursText(x.first_response.median_seconds)],
    [t('reports.first_response_p90'), hoursText(x.first_response.p90_seconds)],
    [t('reports.resolution_median'), hoursText(x.resolution.median_seconds)],
    [t('reports.resolution_p90'), hoursText(x.resolution.p90_seconds)],
    [t('reports.first_response_business'), hoursText(x.first_response_business.median_seconds)],
    [t('reports.resolution_business'), hoursText(x.resolution_business.median_seconds)],
    [t('reports.rating_average'), x.ratings.average === null ? '—' : `${x.ratings.average} (${x.ratings.count})`],
  ];
  return (
    <dl class="card report-totals" aria-label={t('reports.totals')}>
      {items.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

function Usage() {
  const { data, error, reload } = useLoad(() => must(api.GET('/v1/usage')));
  if (!data) return <Loading error={error} retry={reload} />;
  return (
    <section class="card" aria-labelledby="usage-title">
      <h2 id="usage-title" style={{ marginTop: 0 }}>
        {t('reports.usage')}
      </h2>
      <p class="muted">{t('reports.storage', { mb: (data.storage_bytes / 1e6).toFixed(1) })}</p>
      <a class="btn btn-ghost usage-csv" href="/v1/usage/export.csv" download>
        {t('reports.export_csv')}
      </a>
      <DataTable
        label={t('reports.usage_by_month')}
        columns={[
          t('reports.month'),
          t('reports.conversations_billed'),
          t('reports.conversations_imported'),
          t('reports.messages_billed'),
          t('reports.messages_imported'),
        ]}
      >
        {data.months.map((m) => (
          <tr key={m.month}>
            <th scope="row">
              <time dateTime={m.month}>{calendarMonth(m.month)}</time>
            </th>
            <td>{m.conversations.billed}</td>
            <td>{m.conversations.imported}</td>
            <td>{m.messages.billed}</td>
            <td>{m.messages.imported}</td>
          </tr>
        ))}
      </DataTable>
    </section>
  );
}

export function Reports() {
  const [from, setFrom] = useState(daysBefore(29));
  const [to, setTo] = useState(today());
  const [inbox, setInbox] = useState('');
  const [member, setMember] = useState('');
  const members = useLoad(() => must(api.GET('/v1/members', { params: { query: { limit: 200 } } })));
  const { data, error, reload } = useLoad(
    () => must(api.GET('/v1/reports', { params: { query: { from, to, ...(inbox ? { inbox_id: inbox } : {}), ...(member ? { member_id: member } : {}) } } })),
    [from, to, inbox, member],
  );
  const manager = membership.value?.role === 'owner' || membership.value?.role === 'admin';
  const days = data?.days.map((d: Day) => d.day) ?? [];
  return (
    <main class="settings-main reports" id="main" tabIndex={-1}>
      <p>
        <a href="/conversations">← {t('settings.back')}</a>
      </p>
      <h1>{t('reports.title')}</h1>
      <form class="card report-filters" onSubmit={(e) => e.preventDefault()}>
        <div class="field">
          <label for="report-from">{t('reports.from')}</label>
          <input id="report-from" class="input" type="date" value={from} max={to} onChange={(e) => e.currentTarget.value && setFrom(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="report-to">{t('reports.to')}</label>
          <input id="report-to" class="input" type="date" value={to} min={from} onChange={(e) => e.currentTarget.value && setTo(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="report-inbox">{t('reports.inbox')}</label>
          <select id="report-inbox" class="select" value={inbox} onChange={(e) => setInbox(e.currentTarget.value)}>
            <option value="">{t('reports.all_inboxes')}</option>
            <InboxOptions />
          </select>
        </div>
        <div class="field">
          <label for="report-member">{t('reports.member')}</label>
          <select id="report-member" class="select" value={member} onChange={(e) => setMember(e.currentTarget.value)}>
            <option value="">{t('reports.all_members')}</option>
            {(members.data?.data ?? []).map((m) => (
              <option key={m.person_id} value={m.person_id}>
                {m.name ?? m.email}
              </option>
            ))}
          </select>
        </div>
        <a
          class="btn btn-ghost report-csv"
          href={`/v1/reports/export.csv?${new URLSearchParams({ from, to, ...(inbox ? { inbox_id: inbox } : {}), ...(member ? { member_id: member } : {}) })}`}
          download
        >
          {t('reports.export_csv')}
        </a>
      </form>
      {!data ? (
        <Loading error={error} retry={reload} />
      ) : (
        <>
          <Totals report={data} />
          <SlaReport sla={data.sla} />
          <Chart
            title={t('reports.volume')}
            days={days}
            series={[
              ...(data.totals.opened === null ? [] : [{ label: t('reports.opened'), values: data.days.map((d) => d.opened), color: '#2563eb' }]),
              { label: t('reports.closed'), values: data.days.map((d) => d.closed), color: '#16a34a' },
              { label: t('reports.replies'), values: data.days.map((d) => d.replies), color: '#9333ea' },
            ]}
          />
          <Chart
            title={t('reports.times')}
            days={days}
            series={[
              { label: t('reports.first_response_median'), values: data.days.map((d) => hours(d.first_response.median_seconds)), color: '#ea580c' },
              { label: t('reports.resolution_median'), values: data.days.map((d) => hours(d.resolution.median_seconds)), color: '#0891b2' },
            ]}
          />
          <Chart
            title={t('reports.ratings')}
            days={days}
            series={[
              { label: t('reports.rating_count'), values: data.days.map((d) => d.ratings.count), color: '#ca8a04' },
              { label: t('reports.rating_average'), values: data.days.map((d) => d.ratings.average), color: '#dc2626' },
            ]}
          />
        </>
      )}
      {manager && <Usage />}
    </main>
  );
}

export default Reports;
