// Mail the team writes besides replies (issue 33): forwarding a message (from each message's
// "Forward") and starting a conversation by writing ("New conversation", key c, and a contact's
// "Write to …"). Both are dialogs: To/Cc/Bcc lines as in the reply composer, then the text; Ctrl+Enter
// sends, Esc closes.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, type Message, must } from '../../api';
import { Dialog } from '../../components/Dialog';
import { FormError } from '../../components/FormError';
import { t } from '../../i18n';
import { inboxes, memberName, toast } from '../../state';
import { formatAddress, splitAddresses } from '../Recipients';
import './compose.css';

type Lines = { to: string; cc: string; bcc: string };

function AddressLines(props: { prefix: string; value: Lines; onChange: (v: Lines) => void; focusTo: boolean }) {
  return (
    <fieldset class="recipients" aria-label={t('recipients.legend')}>
      {(['to', 'cc', 'bcc'] as const).map((f) => (
        <div class="recipients-line" key={f}>
          <label for={`${props.prefix}-${f}`}>{t(`recipients.${f}`)}</label>
          <input
            id={`${props.prefix}-${f}`}
            class="input"
            value={props.value[f]}
            autoComplete="off"
            spellcheck={false}
            data-autofocus={f === 'to' && props.focusTo ? true : undefined}
            placeholder={f === 'bcc' ? t('recipients.bcc_placeholder') : ''}
            onInput={(e) => props.onChange({ ...props.value, [f]: e.currentTarget.value })}
          />
        </div>
      ))}
    </fieldset>
  );
}

/** The recipients as the API takes them; empty Cc and Bcc left out. */
function recipientsOf(lines: Lines) {
  const cc = splitAddresses(lines.cc);
  const bcc = splitAddresses(lines.bcc);
  return { to: splitAddresses(lines.to), ...(cc.length ? { cc } : {}), ...(bcc.length ? { bcc } : {}) };
}

/** Ctrl/Cmd+Enter in the form sends it. */
const sendOnCtrlEnter = (e: KeyboardEvent) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    (e.currentTarget as HTMLFormElement).requestSubmit();
  }
};

export function ForwardDialog(props: { message: Message; subject: string | null; onClose: () => void; onSent: (m: Message) => void }) {
  const m = props.message;
  const [lines, setLines] = useState<Lines>({ to: '', cc: '', bcc: '' });
  const [note, setNote] = useState('');
  const files = m.attachments.filter((a) => !a.inline).length;
  const [include, setInclude] = useState(true);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  async function send(e: Event) {
    e.preventDefault();
    const r = recipientsOf(lines);
    if (!r.to.length) return setError(t('compose.to_required'));
    setBusy(true);
    setError(null);
    try {
      const sent = await must(
        api.POST('/v1/conversations/{conversationId}/forward', {
          params: { path: { conversationId: m.conversation_id } },
          body: { message_id: m.id, ...r, ...(note.trim() ? { body: note } : {}), include_attachments: include },
        }),
      );
      props.onSent(sent);
      toast(t('compose.sent'));
      props.onClose();
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  }
  return (
    <Dialog title={t('compose.forward_title', { subject: props.subject ?? m.subject ?? '' })} onClose={props.onClose} closeButton={false}>
      <form class="compose-form" onSubmit={send} onKeyDown={sendOnCtrlEnter}>
        <AddressLines prefix="forward" value={lines} onChange={setLines} focusTo />
        <div class="field">
          <label for="forward-note">{t('compose.forward_note')}</label>
          <textarea id="forward-note" class="input" rows={4} value={note} onInput={(e) => setNote(e.currentTarget.value)} />
        </div>
        {files > 0 && (
          <label class="check">
            <input type="checkbox" checked={include} onChange={(e) => setInclude(e.currentTarget.checked)} />{' '}
            {t('compose.include_attachments', { count: files })}
          </label>
        )}
        <p class="muted compose-hint">{t('compose.forward_hint')}</p>
        <FormError error={error} />
        <div class="compose-actions">
          <button class="btn" type="button" onClick={props.onClose}>
            {t('compose.cancel')}
          </button>
          <button class="btn btn-primary" type="submit" disabled={busy} title={`${t('compose.forward_send')} (Ctrl+Enter)`}>
            {busy ? t('compose.sending') : t('compose.forward_send')}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** "Forwarded by … to …" on a forward in the thread. */
export function ForwardedLine(props: { message: Message }) {
  const m = props.message;
  if (!(m.details as { forward?: unknown } | null)?.forward) return null;
  const to = [...(m.email?.to ?? []), ...(m.email?.cc ?? [])].flatMap((a) => (a ? [a.name ?? a.address] : [])).join(', ');
  const author = m.author.type === 'member' ? memberName(m.author.member_id, t('conv.you'), t('conv.team')) : t('conv.api');
  return <p class="forwarded-line">{t('compose.forwarded_line', { author, to })}</p>;
}

/** Inboxes that can send mail (they have an e-mail channel), with that channel. */
function useMailInboxes() {
  const [list, setList] = useState<{ id: string; name: string }[] | null>(null);
  useEffect(() => {
    void api.GET('/v1/channels').then((r) => {
      const withMail = new Set((r.data?.data ?? []).filter((c) => c.kind === 'email').map((c) => c.inbox_id));
      setList(inboxes.value.filter((i) => withMail.has(i.id)).map((i) => ({ id: i.id, name: i.name })));
    });
  }, [inboxes.value]);
  return list;
}

export function NewConversationDialog(props: { contactId?: string; inboxId?: string; onClose: () => void; onStarted: (conversationId: string) => void }) {
  const mailInboxes = useMailInboxes();
  const [inboxId, setInboxId] = useState(props.inboxId ?? '');
  const [lines, setLines] = useState<Lines>({ to: '', cc: '', bcc: '' });
  const [subject, setSubject] = useState('');
  const [body, setBody] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // "Write to …" from a contact: To is the contact at its first address.
  useEffect(() => {
    if (!props.contactId) return;
    void api.GET('/v1/contacts/{contactId}', { params: { path: { contactId: props.contactId } } }).then((r) => {
      const email = r.data?.emails[0];
      if (email) setLines((old) => (old.to ? old : { ...old, to: formatAddress({ name: r.data!.name, address: email }) }));
    });
  }, [props.contactId]);
  useEffect(() => {
    if (mailInboxes?.length && !mailInboxes.some((i) => i.id === inboxId)) setInboxId(mailInboxes[0].id);
  }, [mailInboxes]);
  async function send(e: Event) {
    e.preventDefault();
    const r = recipientsOf(lines);
    if (!r.to.length) return setError(t('compose.to_required'));
    setBusy(true);
    setError(null);
    try {
      const out = await must(api.POST('/v1/conversations', { body: { inbox_id: inboxId, ...r, subject, body } }));
      toast(t('compose.sent'));
      // The opener closes the dialog as it opens the new conversation.
      props.onStarted(out.conversation.id);
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  }
  return (
    <Dialog title={t('compose.new_title')} onClose={props.onClose} closeButton={false}>
      <form class="compose-form" onSubmit={send} onKeyDown={sendOnCtrlEnter}>
        {mailInboxes !== null && mailInboxes.length === 0 ? (
          <p class="muted">{t('compose.no_mail_inbox')}</p>
        ) : (
          <div class="field">
            <label for="new-inbox">{t('compose.inbox')}</label>
            <select id="new-inbox" class="input" value={inboxId} onChange={(e) => setInboxId(e.currentTarget.value)}>
              {(mailInboxes ?? []).map((i) => (
                <option key={i.id} value={i.id}>
                  {i.name}
                </option>
              ))}
            </select>
          </div>
        )}
        <AddressLines prefix="new" value={lines} onChange={setLines} focusTo={!props.contactId} />
        <div class="field">
          <label for="new-subject">{t('compose.subject')}</label>
          <input
            id="new-subject"
            class="input"
            required
            value={subject}
            data-autofocus={props.contactId ? true : undefined}
            onInput={(e) => setSubject(e.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label for="new-body">{t('compose.message')}</label>
          <textarea id="new-body" class="input" rows={6} required value={body} onInput={(e) => setBody(e.currentTarget.value)} />
        </div>
        <FormError error={error} />
        <div class="compose-actions">
          <button class="btn" type="button" onClick={props.onClose}>
            {t('compose.cancel')}
          </button>
          <button class="btn btn-primary" type="submit" disabled={busy || !inboxId} title={`${t('compose.send')} (Ctrl+Enter)`}>
            {busy ? t('compose.sending') : t('compose.send')}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
