// The SLA part of a report: per target how many ended met in time and breached, the share met, and
// breaches by member (the assignee at the breach). A table, so screen readers read it as one.
import type { Schemas } from '../api';
import { t } from '../i18n';
import { memberName } from '../state';

type Sla = Schemas['Report']['sla'];
const TARGETS = ['first_response', 'next_response', 'resolution'] as const;

export function SlaReport(props: { sla: Sla }) {
  const { sla } = props;
  return (
    <section class="card" aria-labelledby="report-sla-title" style={{ marginBottom: 'var(--space-4)' }}>
      <h2 id="report-sla-title" style={{ marginTop: 0 }}>
        {t('reports.sla')}
      </h2>
      <table class="table">
        <thead>
          <tr>
            <th scope="col">{t('reports.sla_target')}</th>
            <th scope="col">{t('reports.sla_met')}</th>
            <th scope="col">{t('reports.sla_breached')}</th>
            <th scope="col">{t('reports.sla_met_percent')}</th>
          </tr>
        </thead>
        <tbody>
          {TARGETS.map((k) => (
            <tr key={k}>
              <th scope="row">{t(`sla.target.${k}`)}</th>
              <td>{sla[k].met}</td>
              <td>{sla[k].breached}</td>
              <td>{sla[k].met_percent === null ? '—' : `${sla[k].met_percent} %`}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {sla.breaches_by_member.length > 0 && (
        <>
          <h3>{t('reports.sla_breaches_by_member')}</h3>
          <ul>
            {sla.breaches_by_member.map((b) => (
              <li key={b.member_id ?? ''}>
                {b.member_id ? memberName(b.member_id, t('conv.you'), t('conv.team')) : t('reports.sla_unassigned')}: {b.breaches}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
