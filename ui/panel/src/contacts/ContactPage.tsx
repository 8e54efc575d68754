// One contact's page: the card (name, addresses, attributes, all editable), its external ids, every
// conversation it has (latest activity first, more on demand), and merge and delete.
import { useEffect, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api, type ConversationListItem, errorText, must, type Schemas } from '../api';
import { Loading } from '../components/Loading';
import { CustomFieldsEditor } from '../custom-fields';
import { absoluteTime, conversationTitle, relativeTime, t } from '../i18n';
import { inboxes } from '../state';
import { ContactCard } from './ContactCard';
import { contactName, DeleteContactDialog, MergeDialog } from './ContactDialogs';

type Contact = Schemas['Contact'];

export function ContactPage() {
  const { params } = useRoute();
  const { route } = useLocation();
  const id = params.id!;
  const [contact, setContact] = useState<Contact | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [dialog, setDialog] = useState<{ kind: 'merge'; into: Contact | null } | { kind: 'delete' } | null>(null);

  async function load() {
    setError(null);
    try {
      setContact(await must(api.GET('/v1/contacts/{contactId}', { params: { path: { contactId: id } } })));
    } catch (e) {
      setError(errorText(e));
    }
  }
  useEffect(() => {
    setContact(null);
    void load();
  }, [id]);
  useEffect(() => {
    if (contact) document.title = `${contactName(contact)} · ${t('contacts.title')}`;
  }, [contact]);

  return (
    <main class="settings-main contact-page" id="main" tabIndex={-1}>
      <p>
        <a href="/contacts">← {t('contacts.all')}</a>
      </p>
      {!contact ? (
        <Loading error={error} retry={() => void load()} />
      ) : (
        <>
          <h1>{contactName(contact)}</h1>
          <div class="contact-layout">
            <section class="card" aria-labelledby="contact-details">
              <h2 id="contact-details" style={{ marginTop: 0 }}>
                {t('contacts.details')}
              </h2>
              <ContactCard
                contact={contact}
                onChanged={(c) => (c.id === contact.id ? setContact(c) : route(`/contacts/${c.id}`))}
                onMergeInto={(owner) => setDialog({ kind: 'merge', into: owner })}
              />
              <CustomFieldsEditor
                object="contact"
                ownerId={contact.id}
                values={contact.custom_fields}
                onSave={async (values) =>
                  setContact(
                    await must(api.PATCH('/v1/contacts/{contactId}', { params: { path: { contactId: contact.id } }, body: { custom_fields: values } })),
                  )
                }
              />
              {contact.external_ids.length > 0 && (
                <>
                  <h3 class="attr-title">{t('contacts.external_ids')}</h3>
                  <dl class="contact-facts">
                    {contact.external_ids.map((x) => (
                      <div key={`${x.inbox_id}/${x.external_id}`}>
                        <dt>{inboxes.value.find((i) => i.id === x.inbox_id)?.name ?? x.inbox_id}</dt>
                        <dd class="mono">{x.external_id}</dd>
                      </div>
                    ))}
                  </dl>
                </>
              )}
              <p class="muted">{t('contacts.created_on', { time: absoluteTime(contact.created_at) })}</p>
              <div class="row-actions">
                <button class="btn" type="button" onClick={() => setDialog({ kind: 'merge', into: null })}>
                  {t('contact.merge')}
                </button>
                <button class="btn btn-danger" type="button" onClick={() => setDialog({ kind: 'delete' })}>
                  {t('contact.delete')}
                </button>
              </div>
            </section>
            <ContactConversations contactId={contact.id} />
          </div>
          {dialog?.kind === 'merge' && (
            <MergeDialog contact={contact} into={dialog.into} onClose={() => setDialog(null)} onMerged={(kept) => route(`/contacts/${kept.id}`)} />
          )}
          {dialog?.kind === 'delete' && <DeleteContactDialog contact={contact} onClose={() => setDialog(null)} onDeleted={() => route('/contacts')} />}
        </>
      )}
    </main>
  );
}

function ContactConversations(props: { contactId: string }) {
  const [rows, setRows] = useState<ConversationListItem[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  async function load(cursor?: string) {
    setError(null);
    try {
      const page = await must(
        api.GET('/v1/conversations', { params: { query: { contact_id: props.contactId, sort: 'activity', limit: 25, ...(cursor ? { cursor } : {}) } } }),
      );
      setRows((r) => (cursor ? [...(r ?? []), ...page.data] : page.data));
      setNext(page.next_cursor ?? null);
    } catch (e) {
      setError(errorText(e));
    }
  }
  useEffect(() => {
    setRows(null);
    void load();
  }, [props.contactId]);
  return (
    <section class="card" aria-labelledby="contact-conversations">
      <h2 id="contact-conversations" style={{ marginTop: 0 }}>
        {t('contacts.conversations')}
      </h2>
      {!rows ? (
        <Loading error={error} retry={() => void load()} />
      ) : rows.length === 0 ? (
        <p class="muted">{t('contacts.no_conversations')}</p>
      ) : (
        <ul role="list" class="contact-conversations">
          {rows.map((c) => (
            <li key={c.id}>
              <a href={`/conversations/${c.id}`}>{conversationTitle(c)}</a>
              <span class="badge">{t(`status.${c.status}`)}</span>
              <span class="muted">
                {inboxes.value.find((i) => i.id === c.inbox_id)?.name ?? ''} · <time dateTime={c.last_message_at}>{relativeTime(c.last_message_at)}</time>
              </span>
              {c.preview && <span class="muted contact-conversation-preview">{c.preview}</span>}
            </li>
          ))}
        </ul>
      )}
      {next && (
        <button class="btn" type="button" onClick={() => void load(next)}>
          {t('contacts.more_conversations')}
        </button>
      )}
    </section>
  );
}
