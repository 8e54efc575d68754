// Settings → members: roles, an agent's inboxes, removing and leaving; invites with their one-time link.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must, type Schemas } from '../../api';
import { Confirm } from '../../components/Confirm';
import { Loading } from '../../components/Loading';
import { SecretOnce } from '../../components/Secret';
import { relativeTime, t } from '../../i18n';
import { inboxes, me, membership, toast } from '../../state';

type Member = Schemas['Member'];
type Invite = Schemas['Invite'];
type Role = Member['role'];
const ROLES: Role[] = ['owner', 'admin', 'agent'];
const fail = (e: unknown) => toast(t('action.failed', { error: errorText(e) }));

export function Members() {
  const [members, setMembers] = useState<Member[] | null>(null);
  const [invites, setInvites] = useState<Invite[]>([]);
  const [removing, setRemoving] = useState<Member | null>(null);
  const [link, setLink] = useState<{ email: string; url: string; mailed: boolean } | null>(null);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('agent');
  /** The invited agent's inboxes: null is every inbox. */
  const [inviteInboxes, setInviteInboxes] = useState<string[] | null>(null);
  const myRole = membership.value?.role;
  const manager = myRole === 'owner' || myRole === 'admin';
  const myPersonId = me.value!.person.id;
  const load = async () => {
    setMembers((await must(api.GET('/v1/members', { params: { query: { limit: 200 } } }))).data);
    if (manager) setInvites((await must(api.GET('/v1/invites'))).data.filter((i) => i.status === 'pending'));
  };
  const [loadError, setLoadError] = useState<string | null>(null);
  const reload = () =>
    load().then(
      () => setLoadError(null),
      (e) => setLoadError(errorText(e)),
    );
  useEffect(() => void reload(), []);
  const mayChange = (m: Member) => manager && (myRole === 'owner' || m.role !== 'owner');
  const update = (m: Member, body: { role?: Role; inbox_ids?: string[] | null }) =>
    must(api.PATCH('/v1/members/{memberId}', { params: { path: { memberId: m.id } }, body })).then(load, fail);
  const showLink = (i: Schemas['InviteWithLink']) => setLink({ email: i.email, url: i.url, mailed: i.mail_sent });

  return (
    <>
      <h1>{t('settings.members')}</h1>
      <p class="lead">{t('members.lead')}</p>
      {link && (
        <SecretOnce
          label={`${t('invites.link', { email: link.email })}. ${link.mailed ? t('invites.mail_sent') : t('invites.mail_not_sent')}`}
          value={link.url}
        />
      )}
      {manager && (
        <form
          class="card"
          onSubmit={async (e) => {
            e.preventDefault();
            try {
              const limit = role === 'agent' && inviteInboxes !== null ? { inbox_ids: inviteInboxes } : {};
              showLink(await must(api.POST('/v1/invites', { body: { email: email.trim(), role, ...limit } })));
              setEmail('');
              setInviteInboxes(null);
              await load();
            } catch (err) {
              fail(err);
            }
          }}
        >
          <h2 style={{ marginTop: 0 }}>{t('invites.title')}</h2>
          <div style={{ display: 'grid', gridTemplateColumns: 'minmax(0, 2fr) minmax(0, 1fr)', gap: 'var(--space-2)' }}>
            <div class="field">
              <label for="invite-email">{t('invites.email')}</label>
              <input id="invite-email" class="input" type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
            </div>
            <div class="field">
              <label for="invite-role">{t('members.role')}</label>
              <select id="invite-role" class="select" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
                {ROLES.filter((r) => myRole === 'owner' || r !== 'owner').map((r) => (
                  <option key={r} value={r}>
                    {t(`role.${r}`)}
                  </option>
                ))}
              </select>
            </div>
          </div>
          {role === 'agent' && inboxes.value.length > 1 && <InboxLimit id="invite-inboxes" value={inviteInboxes} onChange={setInviteInboxes} />}
          <button class="btn btn-primary" type="submit">
            {t('invites.send')}
          </button>
        </form>
      )}
      {invites.length > 0 && (
        <section aria-labelledby="pending-invites">
          <h2 id="pending-invites">{t('invites.pending')}</h2>
          <ul role="list" style={{ listStyle: 'none', padding: 0 }}>
            {invites.map((i) => (
              <li key={i.id} class="card" style={{ display: 'flex', flexWrap: 'wrap', gap: 'var(--space-2)', alignItems: 'center' }}>
                <span class="row-text">
                  {i.email} · {t(`role.${i.role}`)}
                  {i.inbox_ids && ` · ${inboxNames(i.inbox_ids)}`} <span class="muted">· {t('invites.expires', { when: relativeTime(i.expires_at) })}</span>
                </span>
                <button
                  class="btn"
                  type="button"
                  onClick={() => void must(api.POST('/v1/invites/{inviteId}/resend', { params: { path: { inviteId: i.id } } })).then(showLink, fail)}
                >
                  {t('invites.resend')}
                </button>
                <button
                  class="btn btn-danger"
                  type="button"
                  onClick={() => void must(api.DELETE('/v1/invites/{inviteId}', { params: { path: { inviteId: i.id } } })).then(load, fail)}
                >
                  {t('invites.revoke')}
                </button>
              </li>
            ))}
          </ul>
        </section>
      )}
      <h2>{t('settings.members')}</h2>
      {!members ? (
        <Loading error={loadError} retry={reload} />
      ) : (
        <ul role="list" style={{ listStyle: 'none', padding: 0 }}>
          {members.map((m) => (
            <li key={m.id} class="card">
              <div style={{ display: 'flex', flexWrap: 'wrap', gap: 'var(--space-2)', alignItems: 'center' }}>
                <span class="row-text">
                  <strong>{m.name ?? m.email}</strong> {m.person_id === myPersonId && <span class="muted">{t('members.you')}</span>}
                  <div class="muted">
                    {m.name ? `${m.email} · ` : ''}
                    {m.role === 'agent' && m.inbox_ids && `${inboxNames(m.inbox_ids)} · `}
                    {m.last_seen_at ? t('members.last_seen', { when: relativeTime(m.last_seen_at) }) : t('members.never_seen')}
                  </div>
                </span>
                {mayChange(m) ? (
                  <>
                    <label class="visually-hidden" for={`role-${m.id}`}>
                      {t('members.role')}: {m.name ?? m.email}
                    </label>
                    <select
                      id={`role-${m.id}`}
                      class="select"
                      style={{ width: 'auto' }}
                      value={m.role}
                      onChange={(e) => void update(m, { role: e.currentTarget.value as Role })}
                    >
                      {ROLES.filter((r) => myRole === 'owner' || r !== 'owner').map((r) => (
                        <option key={r} value={r}>
                          {t(`role.${r}`)}
                        </option>
                      ))}
                    </select>
                  </>
                ) : (
                  <span class="badge">{t(`role.${m.role}`)}</span>
                )}
                {(mayChange(m) || m.person_id === myPersonId) && (
                  <button class="btn btn-danger" type="button" onClick={() => setRemoving(m)}>
                    {m.person_id === myPersonId ? t('members.leave') : t('members.remove')}
                  </button>
                )}
              </div>
              {m.role === 'agent' && mayChange(m) && inboxes.value.length > 1 && (
                <InboxLimit id={`inboxes-${m.id}`} value={m.inbox_ids} onChange={(inbox_ids) => void update(m, { inbox_ids })} />
              )}
            </li>
          ))}
        </ul>
      )}
      {removing && (
        <Confirm
          title={removing.person_id === myPersonId ? t('members.leave') : t('members.remove')}
          lead={
            removing.person_id === myPersonId
              ? t('members.leave_lead', { workspace: membership.value?.workspace_name ?? '' })
              : t('members.remove_lead', { name: removing.name ?? removing.email })
          }
          action={removing.person_id === myPersonId ? t('members.leave') : t('members.remove')}
          onClose={() => setRemoving(null)}
          onConfirm={async () => {
            try {
              await must(api.DELETE('/v1/members/{memberId}', { params: { path: { memberId: removing.id } } }));
              if (removing.person_id === myPersonId) {
                localStorage.removeItem('svc.workspace');
                location.assign('/');
                return;
              }
              setRemoving(null);
              await load();
            } catch (err) {
              fail(err);
            }
          }}
        />
      )}
    </>
  );
}

const inboxNames = (ids: string[]) =>
  inboxes.value
    .filter((i) => ids.includes(i.id))
    .map((i) => i.name)
    .join(', ') || t('members.no_inboxes');

/** Which inboxes an agent works in: every inbox (null), or the ones ticked (at least one). */
function InboxLimit(props: { id: string; value: string[] | null; onChange: (ids: string[] | null) => void }) {
  const { value } = props;
  return (
    <fieldset class="field inbox-limit" aria-describedby={`${props.id}-hint`}>
      <legend>{t('members.inboxes')}</legend>
      <p id={`${props.id}-hint`} class="muted">
        {t('members.inboxes_hint')}
      </p>
      <div class="checks">
        <label>
          <input type="checkbox" checked={value === null} onChange={() => props.onChange(value === null ? [inboxes.value[0].id] : null)} />
          {t('members.all_inboxes')}
        </label>
        {value !== null &&
          inboxes.value.map((i) => (
            <label key={i.id}>
              <input
                type="checkbox"
                checked={value.includes(i.id)}
                disabled={value.length === 1 && value[0] === i.id}
                onChange={() => props.onChange(value.includes(i.id) ? value.filter((x) => x !== i.id) : [...value, i.id])}
              />
              {i.name}
            </label>
          ))}
      </div>
    </fieldset>
  );
}
