// Step 6, Copy: progress, what needs attention, and the errors so far.
import { useContext } from 'preact/hooks';
import { api, must } from '../../api';
import { useLoad } from '../../components/Loading';
import type { MessageKey } from '../../i18n';
import { absoluteTime, t } from '../../i18n';
import { HelpDeskCredentialsForm } from '../HelpDeskCredentialsForm';
import { MigrationPasswordForm } from '../MigrationPasswordForm';
import { MigrationSignIn } from '../MigrationSignIn';
import { type Migration, SourceContext, useSourceText } from '../model';

const ATTENTION_KEYS: Record<string, [MessageKey, MessageKey]> = {
  login_failed: ['mig.attention.login_failed', 'mig.attention.login_failed_fix'],
  provider_limit: ['mig.attention.provider_limit', 'mig.attention.provider_limit_fix'],
  connection_failed: ['mig.attention.connection_failed', 'mig.attention.connection_failed_fix'],
  address_refused: ['mig.attention.address_refused', 'mig.attention.address_refused_fix'],
  read_only_check: ['mig.attention.read_only_check', 'mig.attention.read_only_check_fix'],
  sign_in_needed: ['mig.attention.sign_in_needed', 'mig.attention.sign_in_needed_fix'],
};

export function CopyStep(props: { m: Migration; onChanged: (m: Migration) => void }) {
  const { m } = props;
  const p = m.progress;
  const errors = useLoad(
    () => must(api.GET('/v1/migrations/{migrationId}/errors', { params: { path: { migrationId: m.id }, query: { limit: 50 } } })),
    [m.id, p.failed, m.state],
  );
  return (
    <>
      {m.state === 'needs_attention' && m.attention && <Attention m={m} onChanged={props.onChanged} />}
      <section class="card" aria-labelledby="mig-copy-title">
        <h2 id="mig-copy-title" style={{ marginTop: 0 }}>
          {t('mig.copy.title')}
        </h2>
        <p class="muted">{t('mig.copy.lead')}</p>
        <ProgressBar m={m} />
        <dl class="mig-totals">
          <div>
            <dt>{t('mig.copy.copied')}</dt>
            <dd data-testid="copied">{p.copied}</dd>
          </div>
          <div>
            <dt>{t('mig.copy.left')}</dt>
            <dd>{p.planned}</dd>
          </div>
          <div>
            <dt>{t('mig.review.conversations')}</dt>
            <dd>{p.conversations}</dd>
          </div>
          <div>
            <dt>{t('mig.review.skipped')}</dt>
            <dd>{p.skipped}</dd>
          </div>
          <div>
            <dt>{t('mig.review.duplicates')}</dt>
            <dd>{p.duplicates}</dd>
          </div>
          <div>
            <dt>{t('mig.copy.failed')}</dt>
            <dd>{p.failed}</dd>
          </div>
        </dl>
        {m.state === 'paused' && <p class="notice">{t('mig.copy.paused')}</p>}
        <p class="muted">{t('mig.copy.banner')}</p>
      </section>
      {errors.data && (errors.data.data.length > 0 || (errors.data as { blocked_commands?: unknown[] }).blocked_commands?.length) ? (
        <ErrorList data={errors.data as unknown as ErrorsAnswer} />
      ) : null}
    </>
  );
}

type ErrorsAnswer = {
  data: { source: { folder: string; uid: number | null }; subject: string | null; sent_at: string | null; error: string | null; attempts: number }[];
  blocked_commands: { at: string; command?: string }[];
};

function ErrorList(props: { data: ErrorsAnswer }) {
  return (
    <section class="card" aria-labelledby="mig-errors-title">
      <h2 id="mig-errors-title" style={{ marginTop: 0 }}>
        {t('mig.errors.title')}
      </h2>
      <ul>
        {props.data.data.map((e, i) => (
          <li key={i}>
            <strong>{e.subject ?? t('list.no_subject')}</strong> <span class="muted mono">{e.source.folder}</span> — {e.error ?? ''}{' '}
            <span class="muted">{t('mig.errors.attempts', { n: e.attempts })}</span>
          </li>
        ))}
        {props.data.blocked_commands.map((b, i) => (
          <li key={`b${i}`}>{t('mig.errors.blocked', { command: b.command ?? '?', when: absoluteTime(b.at) })}</li>
        ))}
      </ul>
    </section>
  );
}

export function ProgressBar(props: { m: Migration }) {
  const p = props.m.progress;
  return (
    <div class="mig-progress-block">
      <progress class="mig-progress" max={100} value={p.percent} aria-label={t('mig.copy.progress_label')} />
      <p aria-live="polite" data-testid="progress-text">
        {t('mig.copy.progress', { percent: p.percent, copied: p.copied, total: p.copied + p.planned + p.failed })}
      </p>
    </div>
  );
}

function Attention(props: { m: Migration; onChanged: (m: Migration) => void }) {
  const { m } = props;
  const st = useSourceText();
  const source = useContext(SourceContext);
  const a = m.attention!;
  const [cause, fix] = ATTENTION_KEYS[a.reason ?? ''] ?? ['mig.attention.other', 'mig.attention.other_fix'];
  return (
    <section class="card mig-attention" role="alert" aria-labelledby="mig-attention-title">
      <h2 id="mig-attention-title" style={{ marginTop: 0 }}>
        {t('mig.attention.title')}
      </h2>
      <p data-testid="attention-cause">{st(cause)}</p>
      {a.message && <p class="muted mono">{a.message}</p>}
      <p>{st(fix, { when: a.retry_at ? absoluteTime(a.retry_at) : '' })}</p>
      {a.reason === 'login_failed' && m.allowed_actions.includes('credentials') && source.kind === 'help_desk' && (
        <HelpDeskCredentialsForm migration={m} onSaved={(next) => next && props.onChanged(next)} />
      )}
      {a.reason === 'login_failed' && m.allowed_actions.includes('credentials') && source.kind === 'sign_in' && (
        <MigrationSignIn migration={m} preset={{ id: m.provider, configured: true }} />
      )}
      {a.reason === 'login_failed' && m.allowed_actions.includes('credentials') && source.kind === 'imap' && (
        <MigrationPasswordForm
          migration={m}
          idPrefix="mig-fix"
          submitLabel={t('mig.attention.save_password')}
          onSaved={(next) => next && props.onChanged(next)}
        />
      )}
      {a.reason === 'sign_in_needed' && m.allowed_actions.includes('credentials') && (
        <MigrationSignIn migration={m} preset={{ id: m.provider, configured: true }} />
      )}
    </section>
  );
}
