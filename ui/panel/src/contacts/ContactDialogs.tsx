// Merging a contact into another (find the one to keep, see what moves, confirm) and deleting one
// (with the number of conversations that go with it): from a conversation's details and the contact page.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must, type Schemas } from '../api';
import { Confirm } from '../components/Confirm';
import { t } from '../i18n';
import { toast } from '../state';

type Contact = Schemas['Contact'];

export const contactName = (c: Contact) => c.name ?? c.emails[0] ?? c.unverified_email ?? c.id;

/** How many conversations the contact has ("200+" past the first page): shown before a merge or a deletion. */
function useConversationCount(contactId: string): string {
  const [count, setCount] = useState<string>('…');
  useEffect(() => {
    void api.GET('/v1/conversations', { params: { query: { contact_id: contactId, limit: 200 } } }).then((r) => {
      const n = r.data?.data.length ?? 0;
      setCount(r.data?.next_cursor ? `${n}+` : String(n));
    });
  }, [contactId]);
  return count;
}

export function MergeDialog(props: { contact: Contact; into: Contact | null; onClose: () => void; onMerged: (c: Contact) => void }) {
  const [q, setQ] = useState('');
  const [found, setFound] = useState<Contact[]>([]);
  const [into, setInto] = useState<Contact | null>(props.into);
  const conversations = useConversationCount(props.contact.id);
  async function search(value: string) {
    setQ(value);
    if (value.trim().length < 2) return setFound([]);
    const r = await api.GET('/v1/contacts', { params: { query: { q: value.trim(), limit: 8 } } });
    setFound((r.data?.data ?? []).filter((c) => c.id !== props.contact.id));
  }
  if (into) {
    const moving = [
      t('contact.merge_moves_conversations', { count: conversations }),
      t('contact.merge_moves_addresses', { count: props.contact.emails.length }),
      t('contact.merge_moves_external_ids', { count: props.contact.external_ids.length }),
    ];
    return (
      <Confirm
        title={t('contact.merge')}
        lead={t('contact.merge_lead', { from: contactName(props.contact), into: contactName(into) })}
        action={t('contact.merge_action')}
        onClose={props.onClose}
        onConfirm={async () => {
          try {
            await must(api.POST('/v1/contacts/{contactId}/merge', { params: { path: { contactId: props.contact.id } }, body: { into_contact_id: into.id } }));
            props.onMerged(await must(api.GET('/v1/contacts/{contactId}', { params: { path: { contactId: into.id } } })));
            toast(t('contact.merged'));
            props.onClose();
          } catch (e) {
            toast(t('action.failed', { error: errorText(e) }));
          }
        }}
      >
        <p style={{ margin: 0 }}>{t('contact.merge_moves', { into: contactName(into) })}</p>
        <ul class="merge-preview">
          {moving.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      </Confirm>
    );
  }
  return (
    <Confirm title={t('contact.merge')} lead={t('contact.merge_lead', { from: contactName(props.contact), into: '…' })} onClose={props.onClose}>
      <div class="field">
        <label for="merge-q">{t('contact.merge_search')}</label>
        <input id="merge-q" class="input" type="search" value={q} onInput={(e) => void search(e.currentTarget.value)} />
      </div>
      <ul role="list" class="results">
        {found.map((c) => (
          <li key={c.id}>
            <button
              type="button"
              class="result"
              style={{ width: '100%', textAlign: 'left', background: 'none', border: 0, cursor: 'pointer' }}
              onClick={() => setInto(c)}
            >
              <span class="who">{c.name ?? t('details.no_name')}</span>
              <span class="snippet">{c.emails.join(', ')}</span>
            </button>
          </li>
        ))}
      </ul>
    </Confirm>
  );
}

export function DeleteContactDialog(props: { contact: Contact; onClose: () => void; onDeleted: () => void }) {
  const count = useConversationCount(props.contact.id);
  return (
    <Confirm
      title={t('contact.delete')}
      lead={t('contact.delete_lead', { name: contactName(props.contact), count })}
      action={t('contact.delete')}
      onClose={props.onClose}
      onConfirm={async () => {
        try {
          await must(api.DELETE('/v1/contacts/{contactId}', { params: { path: { contactId: props.contact.id } } }));
          toast(t('contact.deleted'));
          props.onDeleted();
        } catch (e) {
          toast(t('action.failed', { error: errorText(e) }));
        }
      }}
    />
  );
}
