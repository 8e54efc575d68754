// Step 5, Review: what the copy will bring and skip, before it starts.
import { useContext } from 'preact/hooks';
import { api, must } from '../../api';
import { DataTable, LoadedList } from '../../components/DataTable';
import { useLoad } from '../../components/Loading';
import type { MessageKey } from '../../i18n';
import { absoluteTime, relativeTime, t } from '../../i18n';
import { formatBytes } from '../MigrationUpload';
import { type Migration, type PlanSummary, type PreviewConversation, plural, SourceContext, useSourceText } from '../model';

export function ReviewStep(props: { m: Migration }) {
  const { m } = props;
  const st = useSourceText();
  const source = useContext(SourceContext);
  const summary = m.plan.summary as PlanSummary | null;
  const preview = useLoad(
    () =>
      m.allowed_actions.includes('preview') && summary
        ? must(api.GET('/v1/migrations/{migrationId}/preview', { params: { path: { migrationId: m.id }, query: { limit: 10 } } })).then(
            (r) => r.data as unknown as PreviewConversation[],
          )
        : Promise.resolve([]),
    [m.id, m.plan.current, m.state],
  );
  if (m.state === 'scanning' || !summary) {
    return (
      <section class="card" aria-busy="true">
        <h2 style={{ marginTop: 0 }}>{t('mig.review.title')}</h2>
        <p role="status">{m.state === 'scanning' ? st('mig.review.scanning') : t('mig.review.not_planned')}</p>
      </section>
    );
  }
  const skippedTotal = Object.values(summary.skipped).reduce((a, b) => a + b, 0);
  return (
    <>
      <section class="card" aria-labelledby="mig-review-title">
        <h2 id="mig-review-title" style={{ marginTop: 0 }}>
          {t('mig.review.title')}
        </h2>
        <p>{t('mig.review.nothing_yet')}</p>
        {!m.plan.current && <p class="notice notice-warn">{t('mig.review.outdated')}</p>}
        <dl class="mig-totals" data-testid="totals">
          <div>
            <dt>{st('mig.review.total')}</dt>
            <dd>{summary.total}</dd>
          </div>
          <div>
            <dt>{t('mig.review.to_copy')}</dt>
            <dd>{summary.to_copy}</dd>
          </div>
          <div>
            <dt>{t('mig.review.conversations')}</dt>
            <dd>{summary.conversations}</dd>
          </div>
          <div>
            <dt>{t('mig.review.skipped')}</dt>
            <dd>{skippedTotal}</dd>
          </div>
          <div>
            <dt>{t('mig.review.duplicates')}</dt>
            <dd>{summary.duplicates}</dd>
          </div>
          <div>
            <dt>{t('mig.review.contacts')}</dt>
            <dd>{summary.contacts_to_create}</dd>
          </div>
          <div>
            <dt>{t('mig.review.storage')}</dt>
            <dd>{formatBytes(summary.estimated_bytes)}</dd>
          </div>
          <div>
            <dt>{t('mig.review.time')}</dt>
            <dd>{formatDuration(summary.estimated_seconds)}</dd>
          </div>
        </dl>
        <DataTable
          label={st('mig.review.per_folder')}
          caption
          columns={[
            st('mig.review.folder'),
            t('mig.review.messages'),
            t('mig.review.to_copy'),
            t('mig.review.skipped'),
            t('mig.review.duplicates'),
            t('mig.review.label'),
          ]}
        >
          {summary.folders.map((f) => (
            <tr key={f.path} class={f.never_read ? 'mig-folder never' : undefined}>
              <th scope="row" class="mono">
                {f.path}
                {f.never_read && <div class="hint">{t('mig.choose.never_read')}</div>}
              </th>
              <td>{f.messages}</td>
              <td>{f.to_copy}</td>
              <td>{f.skipped}</td>
              <td>{f.duplicates}</td>
              <td>{f.label ?? '—'}</td>
            </tr>
          ))}
        </DataTable>
        {skippedTotal > 0 && (
          <>
            <h3>{st('mig.review.skipped_why')}</h3>
            <ul>
              {Object.entries(summary.skipped)
                .filter(([, n]) => n > 0)
                .map(([reason, n]) => (
                  <li key={reason}>
                    {n} · {skipReason(reason)}
                  </li>
                ))}
            </ul>
          </>
        )}
        {summary.missing_folders.length > 0 && <p class="notice notice-warn">{t('mig.review.missing', { folders: summary.missing_folders.join(', ') })}</p>}
        {summary.labels.length > 0 && <p>{t('mig.review.labels', { labels: summary.labels.join(', ') })}</p>}
        {source.kind === 'help_desk' && summary.tags && <TagCounts tags={summary.tags} />}
        <p class="muted">{t('mig.review.change_hint')}</p>
      </section>
      <section class="card" aria-labelledby="mig-preview-title">
        <h2 id="mig-preview-title" style={{ marginTop: 0 }}>
          {t('mig.review.preview')}
        </h2>
        <LoadedList rows={preview.data} error={preview.error} retry={preview.reload} empty={t('mig.review.preview_empty')}>
          {(conversations) => (
            <ul role="list" class="mig-preview">
              {conversations.map((c, i) => (
                <li key={i} class="mig-preview-row">
                  <span class={`dot-${c.status}`} aria-hidden="true" />
                  <div>
                    <strong>{c.contact.name ?? c.contact.email ?? t('list.unknown_contact')}</strong>{' '}
                    <span class="muted">{c.subject ?? t('list.no_subject')}</span>
                    <div class="muted">
                      {t(`status.${c.status}`)} · {t('conv.imported')} · {plural('mig.n_messages', c.messages.length)}
                      {c.labels.length > 0 && <> · {c.labels.join(', ')}</>}
                    </div>
                  </div>
                  {c.last_message_at && (
                    <time class="muted" title={absoluteTime(c.last_message_at)}>
                      {relativeTime(c.last_message_at)}
                    </time>
                  )}
                </li>
              ))}
            </ul>
          )}
        </LoadedList>
      </section>
    </>
  );
}

/** A help desk's tags that become labels, with the conversations and messages to copy that carry each. */
function TagCounts(props: { tags: NonNullable<PlanSummary['tags']> }) {
  if (props.tags.length === 0) return <p class="muted">{t('mig.review.no_tags')}</p>;
  return (
    <>
      <h3>{t('mig.review.tags')}</h3>
      <DataTable label={t('mig.review.tags')} testId="tag-counts" columns={[t('mig.review.tag'), t('mig.review.conversations'), t('mig.review.messages')]}>
        {props.tags.map((tag) => (
          <tr key={tag.tag}>
            <th scope="row">{tag.tag}</th>
            <td>{tag.conversations}</td>
            <td>{tag.messages}</td>
          </tr>
        ))}
      </DataTable>
    </>
  );
}

const SKIP_KEYS: Record<string, MessageKey> = {
  never_read: 'mig.skip.never_read',
  duplicate: 'mig.skip.duplicate',
  draft: 'mig.skip.draft',
  too_large: 'mig.skip.too_large',
  outside_date_range: 'mig.skip.outside_date_range',
  automatic_only: 'mig.skip.automatic_only',
  team_only: 'mig.skip.team_only',
  gone: 'mig.skip.gone',
  test_message: 'mig.skip.test_message',
};
function skipReason(reason: string): string {
  return SKIP_KEYS[reason] ? t(SKIP_KEYS[reason]) : reason;
}

function formatDuration(seconds: number): string {
  if (seconds < 60) return t('mig.duration.seconds', { n: Math.max(1, Math.round(seconds)) });
  if (seconds < 3600) return t('mig.duration.minutes', { n: Math.round(seconds / 60) });
  return t('mig.duration.hours', { n: Math.round(seconds / 360) / 10 });
}
