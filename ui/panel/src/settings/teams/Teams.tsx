// Settings → Teams: the member's own availability; the teams with their members (availability and
// load), inboxes and auto-assignment. Owners and admins make, change and delete them; others read.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must } from '../../api';
import { Confirm } from '../../components/Confirm';
import { Loading } from '../../components/Loading';
import { t } from '../../i18n';
import { inboxes, me, members, membership, toast } from '../../state';
import { AvailabilityControl, loadTeams, type Team, teams } from '../../teams';

type Mode = Team['assignment'];
const MODES: Mode[] = ['off', 'round_robin', 'least_busy'];
const fail = (e: unknown) => toast(t('action.failed', { error: errorText(e) }));
const personName = (id: string) => {
  const m = members.value.find((x) => x.person_id === id);
  return m ? (m.name ?? m.email) : id;
};

export function TeamsSettings() {
  const [loaded, setLoaded] = useState(false);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [name, setName] = useState('');
  const manager = membership.value?.role === 'owner' || membership.value?.role === 'admin';
  const reload = () =>
    loadTeams().then(
      () => {
        setLoaded(true);
        setLoadError(null);
      },
      (e) => setLoadError(errorText(e)),
    );
  useEffect(() => void reload(), []);
  return (
    <>
      <h1>{t('teams.title')}</h1>
      <p class="lead">{t('teams.lead')}</p>
      {me.value && <AvailabilityControl />}
      {manager && (
        <form
          class="card"
          onSubmit={async (e) => {
            e.preventDefault();
            try {
              await must(api.POST('/v1/teams', { body: { name: name.trim() } }));
              setName('');
              await reload();
            } catch (err) {
              fail(err);
            }
          }}
        >
          <h2 style={{ marginTop: 0 }}>{t('teams.new')}</h2>
          <div class="field">
            <label for="team-name">{t('teams.name')}</label>
            <input id="team-name" class="input" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </div>
          <button class="btn btn-primary" type="submit">
            {t('teams.create')}
          </button>
        </form>
      )}
      {!loaded ? (
        <Loading error={loadError} retry={reload} />
      ) : teams.value.length === 0 ? (
        <p class="muted">{manager ? t('teams.empty_manager') : t('teams.empty')}</p>
      ) : (
        <ul role="list" style={{ listStyle: 'none', padding: 0 }}>
          {teams.value.map((team) => (
            <li key={team.id}>{manager ? <TeamEditor team={team} onSaved={reload} /> : <TeamCard team={team} />}</li>
          ))}
        </ul>
      )}
    </>
  );
}

function MemberState({ m }: { m: Team['members'][number] }) {
  const state = m.availability === 'away' ? 'away' : m.available ? 'available' : 'offline';
  return (
    <span class={`team-member team-member-${state}`}>
      <span class="team-dot" aria-hidden="true" />
      {personName(m.person_id)}{' '}
      <span class="muted">
        · {t(`teams.state_${state}`)} · {t('teams.load', { n: m.open_conversations })}
      </span>
    </span>
  );
}

function TeamSummary({ team }: { team: Team }) {
  return (
    <>
      <p class="muted">
        {t('teams.counts', { open: team.open_conversations, unassigned: team.unassigned_conversations })} · {t('teams.assignment')}:{' '}
        {t(`teams.assignment_${team.assignment}`)}
        {team.capacity !== null && ` (${team.capacity})`}
      </p>
      <ul role="list" class="team-members" aria-label={t('teams.members')}>
        {team.members.length === 0 ? (
          <li class="muted">{t('teams.no_members')}</li>
        ) : (
          team.members.map((m) => (
            <li key={m.person_id}>
              <MemberState m={m} />
            </li>
          ))
        )}
      </ul>
    </>
  );
}

function TeamCard({ team }: { team: Team }) {
  const names = inboxes.value.filter((i) => team.inbox_ids.includes(i.id)).map((i) => i.name);
  return (
    <section class="card" aria-labelledby={`team-${team.id}`}>
      <h2 id={`team-${team.id}`} style={{ marginTop: 0 }}>
        {team.name}
      </h2>
      <TeamSummary team={team} />
      <p class="muted">
        {t('teams.inboxes')}: {names.join(', ') || t('teams.no_inboxes')}
      </p>
    </section>
  );
}

function TeamEditor({ team, onSaved }: { team: Team; onSaved: () => Promise<void> }) {
  const [name, setName] = useState(team.name);
  const [memberIds, setMemberIds] = useState<string[]>(team.member_ids);
  const [inboxIds, setInboxIds] = useState<string[]>(team.inbox_ids);
  const [mode, setMode] = useState<Mode>(team.assignment);
  const [capacity, setCapacity] = useState(team.capacity === null ? '' : String(team.capacity));
  const [deleting, setDeleting] = useState(false);
  const toggle = (list: string[], id: string) => (list.includes(id) ? list.filter((x) => x !== id) : [...list, id]);
  const id = team.id;
  return (
    <>
      <form
        class="card"
        aria-labelledby={`team-${id}`}
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            await must(
              api.PATCH('/v1/teams/{teamId}', {
                params: { path: { teamId: id } },
                body: { name: name.trim(), member_ids: memberIds, inbox_ids: inboxIds, assignment: mode, capacity: capacity.trim() ? Number(capacity) : null },
              }),
            );
            toast(t('teams.saved'));
            await onSaved();
          } catch (err) {
            fail(err);
          }
        }}
      >
        <h2 id={`team-${id}`} style={{ marginTop: 0 }}>
          {team.name}
        </h2>
        <TeamSummary team={team} />
        <div class="field">
          <label for={`name-${id}`}>{t('teams.name')}</label>
          <input id={`name-${id}`} class="input" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
        <fieldset class="field inbox-limit">
          <legend>{t('teams.members')}</legend>
          <div class="checks">
            {members.value.map((m) => (
              <label key={m.person_id}>
                <input type="checkbox" checked={memberIds.includes(m.person_id)} onChange={() => setMemberIds(toggle(memberIds, m.person_id))} />
                {m.name ?? m.email}
              </label>
            ))}
          </div>
        </fieldset>
        <fieldset class="field inbox-limit">
          <legend>{t('teams.inboxes')}</legend>
          <div class="checks">
            {inboxes.value.map((i) => (
              <label key={i.id}>
                <input type="checkbox" checked={inboxIds.includes(i.id)} onChange={() => setInboxIds(toggle(inboxIds, i.id))} />
                {i.name}
              </label>
            ))}
          </div>
        </fieldset>
        <div style={{ display: 'grid', gridTemplateColumns: 'repeat(auto-fit, minmax(12rem, 1fr))', gap: 'var(--space-2)' }}>
          <div class="field">
            <label for={`mode-${id}`}>{t('teams.assignment')}</label>
            <select id={`mode-${id}`} class="select" value={mode} onChange={(e) => setMode(e.currentTarget.value as Mode)}>
              {MODES.map((m) => (
                <option key={m} value={m}>
                  {t(`teams.assignment_${m}`)}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for={`capacity-${id}`}>{t('teams.capacity')}</label>
            <input
              id={`capacity-${id}`}
              class="input"
              type="number"
              min={1}
              max={1000}
              inputMode="numeric"
              aria-describedby={`capacity-hint-${id}`}
              value={capacity}
              onInput={(e) => setCapacity(e.currentTarget.value)}
            />
            <p id={`capacity-hint-${id}`} class="muted">
              {t('teams.capacity_hint')}
            </p>
          </div>
        </div>
        <div style={{ display: 'flex', gap: 'var(--space-2)', flexWrap: 'wrap' }}>
          <button class="btn btn-primary" type="submit" aria-label={t('teams.save_named', { name: team.name })}>
            {t('teams.save')}
          </button>
          <button class="btn btn-danger" type="button" aria-label={t('teams.delete_named', { name: team.name })} onClick={() => setDeleting(true)}>
            {t('teams.delete')}
          </button>
        </div>
      </form>
      {deleting && (
        <Confirm
          title={t('teams.delete_named', { name: team.name })}
          lead={t('teams.delete_lead', { name: team.name })}
          action={t('teams.delete')}
          onClose={() => setDeleting(false)}
          onConfirm={async () => {
            try {
              await must(api.DELETE('/v1/teams/{teamId}', { params: { path: { teamId: id } } }));
              setDeleting(false);
              await onSaved();
            } catch (err) {
              fail(err);
            }
          }}
        />
      )}
    </>
  );
}
