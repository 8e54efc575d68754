// The details column of a conversation: contact (editable, with attributes, merge and delete), status, assignee,
// priority, labels, spam and inbox. Changes are optimistic; the caller rolls back on failure.
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { type ConversationVisit, VisitCard } from '../analytics';
import type { Conversation, Schemas } from '../api';
import { InboxOptions } from '../components/InboxOptions';
import { ContactCard, DeleteContactDialog, MergeDialog } from '../contacts';
import { CustomFieldsEditor, closeRefused } from '../custom-fields';
import { absoluteTime, t } from '../i18n';
import { inboxes, me, memberName, members, toast } from '../state';
import { Participants } from './Recipients';
import { TeamField } from './TeamField';

export type Contact = Schemas['Contact'];
export type ConversationPatch = Partial<
  Pick<Conversation, 'status' | 'assignee_id' | 'team_id' | 'priority' | 'labels' | 'spam' | 'inbox_id' | 'participants'>
>;
const PRIORITIES = ['low', 'medium', 'high', 'urgent'] as const;

export function Details(props: {
  conversation: Conversation;
  contact: Contact | null;
  /** The web visit a widget conversation came from (null: none tied; undefined: not a chat). */
  visit?: ConversationVisit | null;
  onChange: (patch: ConversationPatch) => Promise<void>;
  /** Saves custom field values (throws the server's refusal, shown under the field). */
  onCustomFields: (values: Record<string, unknown>) => Promise<void>;
  onContactFields: (values: Record<string, unknown>) => Promise<void>;
  onContactChanged: (c: Contact) => void;
  onClose: () => void;
}) {
  const conv = props.conversation;
  const contact = props.contact;
  const myId = me.value!.person.id;
  const { route } = useLocation();
  const [label, setLabel] = useState('');
  const [dialog, setDialog] = useState<'merge' | 'delete' | null>(null);
  const [mergeInto, setMergeInto] = useState<Contact | null>(null);

  function addLabel(e: Event) {
    e.preventDefault();
    const value = label.trim();
    if (!value || conv.labels.includes(value)) return setLabel('');
    void props.onChange({ labels: [...conv.labels, value] });
    setLabel('');
  }

  // Below 900 px the details replace the conversation, whose header held the toggle: the way back
  // is here, and it takes the focus when it is shown (hidden by CSS on wider screens).
  const close = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (close.current?.offsetParent) close.current.focus();
  }, []);

  return (
    <aside class="details" aria-label={t('conv.details')}>
      <button ref={close} class="btn btn-ghost details-close" type="button" onClick={props.onClose}>
        ← {t('conv.hide_details')}
      </button>
      <h3>{t('details.contact')}</h3>
      {contact ? (
        <ContactCard
          contact={contact}
          onChanged={props.onContactChanged}
          onMergeInto={(owner) => {
            setMergeInto(owner);
            setDialog('merge');
          }}
        />
      ) : (
        <p class="muted">{t('details.no_name')}</p>
      )}
      {contact && (
        <div class="row-actions" style={{ marginTop: 'var(--space-2)' }}>
          <button
            class="btn"
            type="button"
            onClick={() => {
              setMergeInto(null);
              setDialog('merge');
            }}
          >
            {t('contact.merge')}
          </button>
          <button class="btn btn-danger" type="button" onClick={() => setDialog('delete')}>
            {t('contact.delete')}
          </button>
        </div>
      )}
      {contact && <CustomFieldsEditor object="contact" ownerId={contact.id} values={contact.custom_fields} onSave={props.onContactFields} />}
      {props.visit && <VisitCard visit={props.visit} />}

      <h3>{t('details.conversation')}</h3>
      <Participants conversation={conv} onChange={props.onChange} />
      <div class="field">
        <label for="status">{t('details.status')}</label>
        <select
          id="status"
          class="select"
          value={conv.status}
          onChange={(e) => void props.onChange({ status: e.currentTarget.value as Conversation['status'] })}
        >
          {(['open', 'pending', 'closed'] as const).map((s) => (
            <option value={s} key={s}>
              {t(`status.${s}`)}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="assignee">{t('details.assignee')}</label>
        <select
          id="assignee"
          class="select"
          value={conv.assignee_id ?? ''}
          onChange={(e) => void props.onChange({ assignee_id: e.currentTarget.value || null })}
        >
          <option value="">{t('details.unassigned')}</option>
          {conv.assignee_id && !members.value.some((m) => m.person_id === conv.assignee_id) && (
            <option value={conv.assignee_id}>{memberName(conv.assignee_id, t('conv.you'), t('conv.team'))}</option>
          )}
          {members.value.map((m) => (
            <option key={m.person_id} value={m.person_id}>
              {m.person_id === myId ? `${m.name ?? m.email} ${t('members.you')}` : (m.name ?? m.email)}
            </option>
          ))}
        </select>
        {conv.assignee_id !== myId && (
          <button class="btn" type="button" onClick={() => void props.onChange({ assignee_id: myId })} title={`${t('details.assign_me')} (a)`}>
            {t('details.assign_me')}
          </button>
        )}
      </div>
      <TeamField value={conv.team_id} onChange={(team_id) => void props.onChange({ team_id })} />
      <div class="field">
        <label for="priority">{t('details.priority')}</label>
        <select
          id="priority"
          class="select"
          value={conv.priority ?? ''}
          onChange={(e) => void props.onChange({ priority: (e.currentTarget.value || null) as Conversation['priority'] })}
        >
          <option value="">{t('details.priority_none')}</option>
          {PRIORITIES.map((p) => (
            <option value={p} key={p}>
              {t(`priority.${p}`)}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <span style={{ fontWeight: 600, fontSize: 'var(--text-sm)' }}>{t('details.labels')}</span>
        {conv.labels.length > 0 && (
          <ul role="list" class="labels">
            {conv.labels.map((l) => (
              <li key={l} class="label-chip">
                {l}
                <button
                  type="button"
                  class="btn-ghost label-remove"
                  aria-label={t('details.remove_label', { label: l })}
                  onClick={() => void props.onChange({ labels: conv.labels.filter((x) => x !== l) })}
                >
                  ×
                </button>
              </li>
            ))}
          </ul>
        )}
        <form onSubmit={addLabel}>
          <label class="visually-hidden" for="add-label">
            {t('details.add_label')}
          </label>
          <input
            id="add-label"
            class="input"
            maxLength={64}
            placeholder={t('details.add_label')}
            value={label}
            onInput={(e) => setLabel(e.currentTarget.value)}
          />
        </form>
      </div>
      <CustomFieldsEditor
        object="conversation"
        ownerId={conv.id}
        values={conv.custom_fields}
        onSave={props.onCustomFields}
        closeBlocked={closeRefused.value === conv.id && conv.status !== 'closed'}
      />
      {inboxes.value.length > 1 && (
        <div class="field">
          <label for="move-inbox">{t('details.move')}</label>
          <select id="move-inbox" class="select" value={conv.inbox_id} onChange={(e) => void props.onChange({ inbox_id: e.currentTarget.value })}>
            <InboxOptions />
          </select>
        </div>
      )}
      <div class="field">
        {conv.spam && (
          <p class="pill-bad" style={{ margin: 0 }}>
            {t('details.is_spam')}
          </p>
        )}
        <button class="btn" type="button" onClick={() => void props.onChange({ spam: !conv.spam })}>
          {conv.spam ? t('details.not_spam') : t('details.spam')}
        </button>
      </div>
      <dl>
        <dt>{t('details.inbox')}</dt>
        <dd>{inboxes.value.find((x) => x.id === conv.inbox_id)?.name ?? '—'}</dd>
        <dt>{t('details.source')}</dt>
        <dd>{t(`source.${conv.source}`)}</dd>
        <dt>{t('details.created')}</dt>
        <dd>
          <time dateTime={conv.created_at}>{absoluteTime(conv.created_at)}</time>
        </dd>
        {conv.rating && (
          <>
            <dt>{t('details.rating')}</dt>
            <dd>
              <span aria-label={t('details.rating_of', { score: conv.rating.score })}>{'★'.repeat(conv.rating.score) + '☆'.repeat(5 - conv.rating.score)}</span>
              {conv.rating.comment && <blockquote style={{ margin: 'var(--space-1) 0 0' }}>{conv.rating.comment}</blockquote>}
            </dd>
          </>
        )}
      </dl>
      {dialog === 'merge' && contact && <MergeDialog contact={contact} into={mergeInto} onClose={() => setDialog(null)} onMerged={props.onContactChanged} />}
      {dialog === 'delete' && contact && <DeleteContactDialog contact={contact} onClose={() => setDialog(null)} onDeleted={() => route('/conversations')} />}
    </aside>
  );
}
