// The sidebar's team views: "My teams" (conversations of every team the member belongs to) and one per team.
import { useEffect } from 'preact/hooks';
import { t } from '../i18n';
import { workspaceId } from '../state';
import { loadTeams, myTeamIds, teams } from '../teams';
import { type ListFilter, listUrl } from './views';

export function TeamViews(props: { filter: ListFilter; onNavigate: () => void }) {
  const f = props.filter;
  useEffect(() => void loadTeams().catch(() => {}), [workspaceId.value]);
  if (teams.value.length === 0) return null;
  const link = (team: string, label: string, count: number) => (
    <li key={team}>
      <a
        class="nav-link"
        href={listUrl({ ...f, view: 'all', inbox: null, label: null, team, saved: null })}
        aria-current={f.team === team ? 'page' : undefined}
        onClick={props.onNavigate}
      >
        {label}
        {count > 0 && (
          <span class="count">
            {count}
            <span class="visually-hidden"> {t('teams.unassigned')}</span>
          </span>
        )}
      </a>
    </li>
  );
  const mine = new Set(myTeamIds());
  return (
    <>
      <div class="nav-section" id="nav-teams">
        {t('teams.nav')}
      </div>
      <ul role="list" aria-labelledby="nav-teams" style={{ listStyle: 'none', margin: 0, padding: 0 }}>
        {mine.size > 0 &&
          link(
            'mine',
            t('teams.mine'),
            teams.value.filter((x) => mine.has(x.id)).reduce((n, x) => n + x.unassigned_conversations, 0),
          )}
        {teams.value.map((x) => link(x.id, x.name, x.unassigned_conversations))}
      </ul>
    </>
  );
}
