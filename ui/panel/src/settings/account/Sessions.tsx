// My account › where I am signed in: each session, ending one or all.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must, type Schemas } from '../../api';
import { relativeTime, t } from '../../i18n';
import { toast } from '../../state';

const fail = (e: unknown) => toast(t('action.failed', { error: errorText(e) }));

/** My account → where I am signed in. */
export function Sessions() {
  const [sessions, setSessions] = useState<Schemas['Session'][]>([]);
  const load = () => must(api.GET('/v1/me/sessions')).then((r) => setSessions(r.data), fail);
  useEffect(() => void load(), []);
  return (
    <section class="card" aria-labelledby="sessions-title">
      <h2 id="sessions-title" style={{ marginTop: 0 }}>
        {t('sessions.title')}
      </h2>
      <ul role="list" style={{ listStyle: 'none', padding: 0 }}>
        {sessions.map((s) => (
          <li
            key={s.id}
            style={{ display: 'flex', gap: 'var(--space-2)', alignItems: 'center', padding: 'var(--space-2) 0', borderBottom: '1px solid var(--border)' }}
          >
            <span style={{ flex: 1, minWidth: 0, overflowWrap: 'anywhere' }}>
              {s.user_agent ?? t('sessions.unknown')} {s.current && <strong>({t('sessions.current')})</strong>}
              <div class="muted">{t('sessions.used', { when: relativeTime(s.last_used_at) })}</div>
            </span>
            {!s.current && (
              <button
                class="btn"
                type="button"
                onClick={() => void must(api.DELETE('/v1/me/sessions/{sessionId}', { params: { path: { sessionId: s.id } } })).then(load, fail)}
              >
                {t('sessions.end')}
              </button>
            )}
          </li>
        ))}
      </ul>
      <button class="btn btn-danger" type="button" onClick={() => void must(api.DELETE('/v1/me/sessions')).then(() => location.assign('/sign-in'), fail)}>
        {t('sessions.end_all')}
      </button>
    </section>
  );
}
