// Settings › Saved replies & signatures: the member's own signature, inbox signatures (owners and
// admins), and saved replies (workspace ones edited by owners and admins, personal ones by their owner).
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, errorText, must, type Schemas } from '../../api';
import { Confirm } from '../../components/Confirm';
import { DataTable, LoadedList } from '../../components/DataTable';
import { FormError } from '../../components/FormError';
import { InboxOptions } from '../../components/InboxOptions';
import { Loading, useLoad } from '../../components/Loading';
import { RichText, type RichTextHandle, textToHtml } from '../../conversations';
import { t } from '../../i18n';
import { inboxes, membership, toast } from '../../state';

type SavedReply = Schemas['SavedReply'];
const PLACEHOLDERS = [
  'contact.name',
  'contact.first_name',
  'contact.email',
  'member.name',
  'member.first_name',
  'member.email',
  'inbox.name',
  'conversation.subject',
];

export function SavedRepliesSettings() {
  const manager = membership.value?.role === 'owner' || membership.value?.role === 'admin';
  return (
    <>
      <h1>{t('settings.saved_replies')}</h1>
      <p class="lead">{t('replies.lead')}</p>
      <PlaceholderHelp />
      <MySignature />
      {manager && <InboxSignature />}
      <SavedReplies manager={manager} />
    </>
  );
}

function PlaceholderHelp() {
  return (
    <section class="card" aria-labelledby="ph-title">
      <h2 id="ph-title" style={{ marginTop: 0 }}>
        {t('replies.placeholders')}
      </h2>
      <p class="hint">{t('replies.placeholders_hint')}</p>
      <ul class="placeholder-list">
        {PLACEHOLDERS.map((p) => (
          <li key={p} class="mono">{`{{${p}}}`}</li>
        ))}
      </ul>
    </section>
  );
}

/** What a saved reply or signature shows in the editor: its html, or its text as paragraphs. */
const editorHtml = (v: { body: string; html?: string | null }) => v.html ?? textToHtml(v.body);

/**
 * A labelled formatted text box: the composer's editor (bold, italic, links, lists, quotes, code,
 * Markdown shortcuts), loaded lazily as in the composer. The text box is labelled by the label
 * element (a contenteditable is not a labelable element), which focuses it when clicked.
 */
function RichField(props: {
  id: string;
  label: string;
  hint?: string;
  placeholder: string;
  editor: { current: RichTextHandle | null };
  initialHtml: string;
  onChange: (html: string) => void;
}) {
  const labelId = `${props.id}-label`;
  return (
    <div class="field">
      <label id={labelId} for={props.id} onClick={() => props.editor.current?.focus()}>
        {props.label}
      </label>
      <div class="rich-field">
        <RichText
          ref={props.editor}
          id={props.id}
          initialHtml={props.initialHtml}
          placeholder={props.placeholder}
          attributes={{ 'aria-labelledby': labelId, 'aria-describedby': props.hint ? `${props.id}-hint` : undefined }}
          onChange={props.onChange}
          onCaret={() => {}}
          onKeyDown={() => false}
          onBlur={() => {}}
        />
      </div>
      {props.hint && (
        <span class="hint" id={`${props.id}-hint`}>
          {props.hint}
        </span>
      )}
    </div>
  );
}

function SignatureForm(props: {
  id: string;
  title: string;
  hint: string;
  value: { body: string; html: string | null };
  onSave: (html: string) => Promise<void>;
}) {
  const editor = useRef<RichTextHandle>(null);
  const [html, setHtml] = useState(editorHtml(props.value));
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const next = editorHtml(props.value);
    setHtml(next);
    if (editor.current && editor.current.html() !== next) editor.current.setHtml(next);
  }, [props.value.body, props.value.html]);
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        setError(null);
        try {
          await props.onSave(editor.current?.html() ?? html);
          toast(t('settings.saved'));
        } catch (err) {
          setError(errorText(err));
        }
      }}
    >
      <RichField
        id={props.id}
        label={props.title}
        hint={props.hint}
        placeholder={t('signature.placeholder')}
        editor={editor}
        initialHtml={html}
        onChange={setHtml}
      />
      <FormError error={error} />
      <button class="btn btn-primary" type="submit">
        {t('settings.save')}
      </button>
    </form>
  );
}

function MySignature() {
  const { data, error, reload } = useLoad(() => must(api.GET('/v1/me/signature')));
  return (
    <section class="card" aria-labelledby="my-sig-title">
      <h2 id="my-sig-title" style={{ marginTop: 0 }}>
        {t('signature.mine')}
      </h2>
      {data ? (
        <SignatureForm
          id="my-signature"
          title={t('signature.text')}
          hint={t('signature.mine_hint')}
          value={data}
          onSave={async (html) => {
            await must(api.PUT('/v1/me/signature', { body: { html } }));
            void reload();
          }}
        />
      ) : (
        <Loading error={error} retry={reload} />
      )}
    </section>
  );
}

function InboxSignature() {
  const [chosen, setInboxId] = useState('');
  // The inbox list may arrive after this section: until one is chosen, the first inbox.
  const inboxId = chosen || inboxes.value[0]?.id || '';
  if (!inboxes.value.length) return null;
  return (
    <section class="card" aria-labelledby="inbox-sig-title">
      <h2 id="inbox-sig-title" style={{ marginTop: 0 }}>
        {t('signature.inbox')}
      </h2>
      <div class="field">
        <label for="sig-inbox">{t('details.inbox')}</label>
        <select id="sig-inbox" class="select" value={inboxId} onChange={(e) => setInboxId(e.currentTarget.value)} style={{ maxWidth: '320px' }}>
          <InboxOptions />
        </select>
      </div>
      <InboxSignatureForm inboxId={inboxId} />
    </section>
  );
}

/** An inbox's signature on its own card: for the inbox's settings page (owners and admins). */
export function InboxSignatureCard(props: { inboxId: string }) {
  return (
    <section class="card" aria-labelledby="inbox-sig-title">
      <h2 id="inbox-sig-title" style={{ marginTop: 0 }}>
        {t('signature.inbox')}
      </h2>
      <InboxSignatureForm inboxId={props.inboxId} />
    </section>
  );
}

function InboxSignatureForm(props: { inboxId: string }) {
  const { inboxId } = props;
  const { data, error, reload } = useLoad(() => must(api.GET('/v1/inboxes/{inboxId}/signature', { params: { path: { inboxId } } })), [inboxId]);
  if (!data || data.inbox_id !== inboxId) return <Loading error={error} retry={reload} />;
  return (
    <SignatureForm
      id="inbox-signature"
      title={t('signature.text')}
      hint={t('signature.inbox_hint')}
      value={data}
      onSave={async (html) => {
        await must(api.PUT('/v1/inboxes/{inboxId}/signature', { params: { path: { inboxId } }, body: { html } }));
        void reload();
      }}
    />
  );
}

function SavedReplies(props: { manager: boolean }) {
  const { data, error, reload } = useLoad(() => must(api.GET('/v1/saved-replies', { params: { query: { limit: 200 } } })));
  const [editing, setEditing] = useState<SavedReply | null>(null);
  const [name, setName] = useState('');
  const editor = useRef<RichTextHandle>(null);
  const [scope, setScope] = useState<'personal' | 'workspace'>('personal');
  const [formError, setFormError] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<SavedReply | null>(null);
  const mayEdit = (r: SavedReply) => r.scope === 'personal' || props.manager;

  function edit(r: SavedReply | null) {
    setEditing(r);
    setName(r?.name ?? '');
    editor.current?.setHtml(r ? editorHtml(r) : '');
    setScope(r?.scope ?? 'personal');
    setFormError(null);
    // The form is always there: move the focus to it now (a later focus could steal typed keys).
    if (r) document.getElementById('reply-name')?.focus();
  }

  async function save(e: Event) {
    e.preventDefault();
    setFormError(null);
    try {
      const html = editor.current?.html() ?? '';
      if (editing) await must(api.PATCH('/v1/saved-replies/{savedReplyId}', { params: { path: { savedReplyId: editing.id } }, body: { name, html } }));
      else await must(api.POST('/v1/saved-replies', { body: { name, html, scope } }));
      toast(t('settings.saved'));
      edit(null);
      void reload();
    } catch (err) {
      setFormError(errorText(err));
    }
  }

  return (
    <section aria-labelledby="replies-title">
      <h2 id="replies-title">{t('replies.title')}</h2>
      <form class="card" onSubmit={save}>
        <h3 style={{ marginTop: 0 }}>{editing ? t('replies.edit_title', { name: editing.name }) : t('replies.new')}</h3>
        <div class="field">
          <label for="reply-name">{t('replies.name')}</label>
          <input
            id="reply-name"
            class="input"
            required
            maxLength={64}
            value={name}
            aria-describedby="reply-name-hint"
            onInput={(e) => setName(e.currentTarget.value)}
            style={{ maxWidth: '320px' }}
          />
          <span class="hint" id="reply-name-hint">
            {t('replies.name_hint')}
          </span>
        </div>
        <RichField id="reply-body" label={t('replies.body')} placeholder={t('replies.body_placeholder')} editor={editor} initialHtml="" onChange={() => {}} />
        {!editing && (
          <fieldset class="field" style={{ border: 0, padding: 0 }}>
            <legend style={{ fontWeight: 600, fontSize: 'var(--text-sm)' }}>{t('replies.scope')}</legend>
            <div class="checks">
              <label>
                <input type="radio" name="reply-scope" checked={scope === 'personal'} onChange={() => setScope('personal')} />
                {t('replies.personal_long')}
              </label>
              <label>
                <input type="radio" name="reply-scope" checked={scope === 'workspace'} disabled={!props.manager} onChange={() => setScope('workspace')} />
                {t('replies.workspace_long')}
              </label>
            </div>
            {!props.manager && <span class="hint">{t('replies.workspace_managers')}</span>}
          </fieldset>
        )}
        <FormError error={formError} />
        <div style={{ display: 'flex', gap: 'var(--space-2)' }}>
          <button class="btn btn-primary" type="submit">
            {editing ? t('settings.save') : t('settings.create')}
          </button>
          {editing && (
            <button class="btn" type="button" onClick={() => edit(null)}>
              {t('settings.cancel')}
            </button>
          )}
        </div>
      </form>
      <LoadedList rows={data?.data} error={error} retry={reload} empty={t('replies.empty')}>
        {(replies) => (
          <DataTable label={t('replies.table')} columns={[t('replies.name'), t('replies.body'), t('replies.scope'), { hidden: t('replies.actions') }]}>
            {replies.map((r) => (
              <tr key={r.id}>
                <td class="mono">#{r.name}</td>
                <td class="reply-body">{r.body}</td>
                <td>{r.scope === 'personal' ? t('replies.personal') : t('replies.workspace')}</td>
                <td>
                  {mayEdit(r) && (
                    <div style={{ display: 'flex', gap: 'var(--space-1)' }}>
                      <button class="btn" type="button" onClick={() => edit(r)} aria-label={t('replies.edit_named', { name: r.name })}>
                        {t('replies.edit')}
                      </button>
                      <button class="btn btn-danger" type="button" onClick={() => setDeleting(r)} aria-label={t('replies.delete_named', { name: r.name })}>
                        {t('replies.delete')}
                      </button>
                    </div>
                  )}
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </LoadedList>
      {deleting && (
        <Confirm
          title={t('replies.delete')}
          lead={t('replies.delete_confirm', { name: deleting.name })}
          action={t('replies.delete')}
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            try {
              await must(api.DELETE('/v1/saved-replies/{savedReplyId}', { params: { path: { savedReplyId: deleting.id } } }));
              setDeleting(null);
              if (editing?.id === deleting.id) edit(null);
              void reload();
            } catch (err) {
              toast(t('action.failed', { error: errorText(err) }));
            }
          }}
        />
      )}
    </section>
  );
}
