import { t } from '../i18n';
import { NotificationBell } from '../notifications';
import { inboxes, me, overview, signOut, switchWorkspace, workspaceId } from '../state';
import { InstallHint } from './InstallHint';
import { SavedViewsNav } from './SavedViews';
import { TeamViews } from './TeamViews';
import { type ListFilter, listUrl, type View } from './views';

export function Nav(props: { filter: ListFilter; onNavigate: () => void; onHelp: () => void }) {
  const f = props.filter;
  const views: [View, string][] = [
    ['mine', t('nav.mine')],
    ['unassigned', t('nav.unassigned')],
    ['all', t('nav.all')],
  ];
  const memberships = me.value?.memberships ?? [];
  return (
    <nav class="nav" aria-label={t('nav.menu')}>
      <div class="nav-head">
        {memberships.length > 1 ? (
          <>
            <label class="visually-hidden" for="ws">
              {t('nav.workspace')}
            </label>
            <select
              id="ws"
              class="select"
              value={workspaceId.value ?? ''}
              onChange={(e) => void switchWorkspace(e.currentTarget.value).then(() => location.assign('/conversations'))}
            >
              {memberships.map((m) => (
                <option value={m.workspace_id} key={m.workspace_id}>
                  {m.workspace_name}
                </option>
              ))}
            </select>
          </>
        ) : (
          <strong>{memberships[0]?.workspace_name}</strong>
        )}
        <NotificationBell />
      </div>
      <div class="nav-scroll">
        <div class="nav-section" id="nav-views">
          {t('nav.views')}
        </div>
        <ul role="list" aria-labelledby="nav-views" style={{ listStyle: 'none', margin: 0, padding: 0 }}>
          {views.map(([view, label]) => (
            <li key={view}>
              <a
                class="nav-link"
                href={listUrl({ ...f, view, inbox: null, label: null, team: null, saved: null })}
                aria-current={!f.inbox && !f.team && !f.saved && f.view === view ? 'page' : undefined}
                onClick={props.onNavigate}
              >
                {label}
                <Count n={overview.value?.unread[view] ?? 0} />
              </a>
            </li>
          ))}
        </ul>
        <SavedViewsNav filter={f} onNavigate={props.onNavigate} />
        {inboxes.value.length > 0 && (
          <>
            <div class="nav-section" id="nav-inboxes">
              {t('nav.inboxes')}
            </div>
            <ul role="list" aria-labelledby="nav-inboxes" style={{ listStyle: 'none', margin: 0, padding: 0 }}>
              {inboxes.value.map((inbox) => (
                <li key={inbox.id}>
                  <a
                    class="nav-link"
                    href={listUrl({ ...f, view: 'all', inbox: inbox.id, label: null, team: null, saved: null })}
                    aria-current={f.inbox === inbox.id ? 'page' : undefined}
                    onClick={props.onNavigate}
                  >
                    {inbox.name}
                    <Count n={overview.value?.unread.inboxes[inbox.id] ?? 0} />
                  </a>
                </li>
              ))}
            </ul>
          </>
        )}
        <TeamViews filter={f} onNavigate={props.onNavigate} />
        {(overview.value?.labels.length ?? 0) > 0 && (
          <>
            <div class="nav-section" id="nav-labels">
              {t('nav.labels')}
            </div>
            <ul role="list" aria-labelledby="nav-labels" style={{ listStyle: 'none', margin: 0, padding: 0 }}>
              {overview.value!.labels.map((l) => (
                <li key={l.label}>
                  <a
                    class="nav-link"
                    href={listUrl({ ...f, view: 'all', inbox: null, label: l.label, team: null, saved: null })}
                    aria-current={f.label === l.label ? 'page' : undefined}
                    onClick={props.onNavigate}
                  >
                    {l.label}
                    <span class="count">{l.open}</span>
                  </a>
                </li>
              ))}
            </ul>
          </>
        )}
      </div>
      <InstallHint />
      <div class="nav-foot">
        <a class="nav-link" href="/contacts" style={{ width: 'auto' }}>
          {t('nav.contacts')}
        </a>
        <a class="nav-link" href="/reports" style={{ width: 'auto' }}>
          {t('nav.reports')}
        </a>
        <a class="nav-link" href="/analytics" style={{ width: 'auto' }}>
          {t('nav.analytics')}
        </a>
        <a class="nav-link" href="/settings" style={{ width: 'auto' }}>
          {t('nav.settings')}
        </a>
        <button class="btn btn-ghost btn-icon" type="button" onClick={props.onHelp} title={`${t('nav.shortcuts')} (?)`} aria-label={t('nav.shortcuts')}>
          ?
        </button>
        <button class="btn btn-ghost" type="button" onClick={() => void signOut()} title={me.value?.person.email}>
          {t('signin.sign_out')}
        </button>
      </div>
    </nav>
  );
}

function Count(props: { n: number }) {
  if (!props.n) return null;
  return (
    <span class="count">
      {props.n}
      <span class="visually-hidden"> {t('list.unread')}</span>
    </span>
  );
}
