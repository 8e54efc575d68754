// The web visit a widget conversation came from (GET /v1/conversations/{id} → visit), shown in the
// conversation's details: entry page, source, campaign, country, device and the pages seen that day.
import type { Schemas } from '../api';
import { clockTime, locale, t } from '../i18n';

export type ConversationVisit = NonNullable<Schemas['ConversationVisit']>;

export function countryName(code: string | null): string {
  if (!code) return t('analytics.unknown');
  try {
    return new Intl.DisplayNames([locale.value], { type: 'region' }).of(code) ?? code;
  } catch {
    return code;
  }
}

export function VisitCard(props: { visit: ConversationVisit }) {
  const v = props.visit;
  const campaign = [v.utm.campaign, v.utm.medium].filter(Boolean).join(' · ');
  return (
    <section class="visit-card" aria-labelledby="visit-title">
      <h3 id="visit-title">{t('analytics.visit')}</h3>
      <dl>
        <dt>{t('analytics.entry_page')}</dt>
        <dd class="visit-path">{v.entry_page}</dd>
        <dt>{t('analytics.source')}</dt>
        <dd>{v.source ?? t('analytics.direct')}</dd>
        {campaign && (
          <>
            <dt>{t('analytics.campaign')}</dt>
            <dd>{campaign}</dd>
          </>
        )}
        <dt>{t('analytics.country')}</dt>
        <dd>{[v.city, v.region, countryName(v.country)].filter(Boolean).join(', ')}</dd>
        <dt>{t('analytics.device')}</dt>
        <dd>{[v.device ? t(`analytics.device_${v.device}`) : null, v.browser, v.os].filter(Boolean).join(' · ')}</dd>
      </dl>
      {v.pages.length > 0 && (
        <details class="visit-pages">
          <summary>{t('analytics.pages_seen', { count: v.pages.length })}</summary>
          <ol>
            {v.pages.map((p) => (
              <li key={p.at + p.path}>
                <time dateTime={p.at}>{clockTime(p.at)}</time> <span class="visit-path">{p.path}</span>
              </li>
            ))}
          </ol>
        </details>
      )}
    </section>
  );
}
