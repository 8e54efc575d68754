// Mail the team writes besides replies (issue 33): forwarding a message (from each message's
// "Forward") and starting a conversation by writing ("New conversation", key c, and a contact's
// "Write to …"). Both are dialogs: To/Cc/Bcc lines as in the reply composer, then the text; Ctrl+Enter
// sends, Esc closes. Undo send as for replies: held for the person's delay (send_at), "Undo" in a toast
// cancels it and opens the dialog again as it was (a new conversation cancelled this way is removed
// by the server). A new conversation takes files (button or drop), uploaded to its inbox first.

import { signal } from '@preact/signals';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, errorText, type Message, must, type Schemas } from '../../api';
import { Dialog } from '../../components/Dialog';
import { FormError } from '../../components/FormError';
import { absoluteTime, t } from '../../i18n';
import { TimeChoices } from '../../snooze';
import { actionToast, inboxes, me, memberName, toast, workspaceId } from '../../state';
import { RichText, type RichTextHandle } from '../editor/RichText';
import { FileChips } from '../FileChips';
import { formatAddress, splitAddresses } from '../Recipients';
import './compose.css';

type Lines = { to: string; cc: string; bcc: string };
/** A file uploaded for the message; `inline`: a picture pasted or dropped into the text (sent in place while the text shows it). */
type Upload = { id: string; filename: string; size: number; inline?: boolean };
/** What a forward dialog held when it was sent: given back when the send is undone. */
export type ForwardDraft = { lines: Lines; note: string; include: boolean };
/** The same for a new conversation; `removed`: the conversation its undone first message left behind (gone now). */
export type NewDraft = { inboxId: string; lines: Lines; subject: string; body: string; files: Upload[]; removed?: string };

/** A new conversation to open the composer with, asked from elsewhere (an undo, a cancelled first message). */
export const composeAsked = signal<NewDraft | null>(null);

/** Undo send: how long the person holds what they send (0 = off), as send_at. */
function hold(): { seconds: number; body: { send_at?: string } } {
  const seconds = me.value?.person.undo_send_seconds ?? 10;
  return { seconds, body: seconds > 0 ? { send_at: new Date(Date.now() + seconds * 1000).toISOString() } : {} };
}

/** "Sending…" with Undo for the delay: Undo cancels the held message and hands back what the server returned. */
function offerUndo(seconds: number, path: { conversationId: string; messageId: string }, back: (answer: Schemas['CancelledMessage']) => void) {
  actionToast(
    t('composer.sending'),
    {
      label: t('composer.undo'),
      run: () =>
        void must(api.DELETE('/v1/conversations/{conversationId}/messages/{messageId}/schedule', { params: { path } })).then(back, (e) =>
          toast(t('composer.undo_failed', { error: errorText(e) })),
        ),
    },
    seconds * 1000,
  );
}

/** The lines of the recipients a cancelled message had. */
export function linesOf(answer: Pick<Schemas['CancelledMessage'], 'to' | 'cc' | 'bcc'>): Lines {
  const join = (list: { name: string | null; address: string }[]) => list.map(formatAddress).join(', ');
  return { to: join(answer.to), cc: join(answer.cc), bcc: join(answer.bcc) };
}

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

export function ForwardDialog(props: {
  message: Message;
  subject: string | null;
  initial?: ForwardDraft;
  onClose: () => void;
  onSent: (m: Message) => void;
  /** Undo send: the held forward was cancelled; the dialog is to open again with what it held. */
  onUndone: (messageId: string, draft: ForwardDraft, original: Message) => void;
}) {
  const m = props.message;
  const [lines, setLines] = useState<Lines>(props.initial?.lines ?? { to: '', cc: '', bcc: '' });
  const [note, setNote] = useState(props.initial?.note ?? '');
  const files = m.attachments.filter((a) => !a.inline).length;
  const [include, setInclude] = useState(props.initial?.include ?? true);
  const [busy, setBusy] = useState(false);
  const [later, setLater] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const editor = useRef<RichTextHandle>(null);
  // Pictures pasted or dropped into the note: uploads of the conversation, put in place.
  async function pictures(list: File[]) {
    for (const file of list) {
      try {
        const answer = await upload(`/v1/conversations/${m.conversation_id}/attachments`, file);
        editor.current?.insertImage(answer.url, answer.filename);
        setNote(editor.current?.html() ?? '');
      } catch (e) {
        setError(t('composer.attach_failed', { name: file.name, error: errorText(e) }));
      }
    }
  }
  /** Sends now (held for the undo delay), or at `at` (send later). */
  async function send(e?: Event, at?: Date) {
    e?.preventDefault();
    const r = recipientsOf(lines);
    if (!r.to.length) return setError(t('compose.to_required'));
    setBusy(true);
    setError(null);
    try {
      const held = at ? { seconds: 0, body: { send_at: at.toISOString() } } : hold();
      const sent = await must(
        api.POST('/v1/conversations/{conversationId}/forward', {
          params: { path: { conversationId: m.conversation_id } },
          body: {
            message_id: m.id,
            ...r,
            ...(hasText(note) || shownUploads(note).length ? { html: note, attachment_ids: shownUploads(note) } : {}),
            include_attachments: include,
            ...held.body,
          },
        }),
      );
      props.onSent(sent);
      const draft = { lines, note, include };
      if (at) toast(t('compose.scheduled_for', { time: absoluteTime(at.toISOString()) }));
      else if (sent.status === 'scheduled') {
        const undone = props.onUndone;
        offerUndo(held.seconds, { conversationId: m.conversation_id, messageId: sent.id }, () => undone(sent.id, draft, m));
      } else toast(t('compose.sent'));
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
          <FormattedText
            id="forward-note"
            label={t('compose.forward_note')}
            html={note}
            onChange={setNote}
            editor={editor}
            onPictures={(list) => void pictures(list)}
          />
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
          <LaterButton controls="forward-later" open={later} disabled={busy} onToggle={() => setLater(!later)} />
          <button class="btn btn-primary" type="submit" disabled={busy} title={`${t('compose.forward_send')} (Ctrl+Enter)`}>
            {busy ? t('compose.sending') : t('compose.forward_send')}
          </button>
        </div>
      </form>
      {later && <LaterChoices id="forward-later" onPick={(at) => void send(undefined, at)} />}
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

export function NewConversationDialog(props: {
  contactId?: string;
  inboxId?: string;
  initial?: NewDraft;
  onClose: () => void;
  onStarted: (conversationId: string) => void;
}) {
  const mailInboxes = useMailInboxes();
  const initial = props.initial;
  const [inboxId, setInboxId] = useState(initial?.inboxId ?? props.inboxId ?? '');
  const [lines, setLines] = useState<Lines>(initial?.lines ?? { to: '', cc: '', bcc: '' });
  const [subject, setSubject] = useState(initial?.subject ?? '');
  const [body, setBody] = useState(initial?.body ?? '');
  const [files, setFiles] = useState<Upload[]>(initial?.files ?? []);
  const [uploading, setUploading] = useState(0);
  const [busy, setBusy] = useState(false);
  const [later, setLater] = useState(false);
  const [error, setError] = useState<string | null>(null);

  // Files go up as soon as they are chosen or dropped (to the inbox: the conversation does not exist yet).
  const editor = useRef<RichTextHandle>(null);
  async function attach(list: FileList | File[], inline = false) {
    for (const file of Array.from(list)) {
      setUploading((n) => n + 1);
      try {
        const answer = await upload(`/v1/inboxes/${inboxId}/attachments`, file);
        setFiles((old) => [...old, { id: answer.id, filename: answer.filename, size: answer.size, inline }]);
        if (inline) {
          editor.current?.insertImage(answer.url, answer.filename);
          setBody(editor.current?.html() ?? '');
        }
      } catch (e) {
        setError(t('composer.attach_failed', { name: file.name, error: errorText(e) }));
      } finally {
        setUploading((n) => n - 1);
      }
    }
  }
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
  /** Sends now (held for the undo delay), or at `at` (send later). */
  async function send(e?: Event, at?: Date) {
    e?.preventDefault();
    const r = recipientsOf(lines);
    if (!r.to.length) return setError(t('compose.to_required'));
    if (!hasText(body)) return setError(t('compose.body_required'));
    setBusy(true);
    setError(null);
    try {
      const held = at ? { seconds: 0, body: { send_at: at.toISOString() } } : hold();
      // Attachments, and the pasted pictures the text still shows.
      const ids = files.filter((f) => !f.inline || body.includes(`/v1/attachments/${f.id}/content`)).map((f) => f.id);
      const out = await must(
        api.POST('/v1/conversations', { body: { inbox_id: inboxId, ...r, subject, html: body, ...(ids.length ? { attachment_ids: ids } : {}), ...held.body } }),
      );
      const draft: NewDraft = { inboxId, lines, subject, body, files };
      const path = { conversationId: out.conversation.id, messageId: out.message.id };
      if (at) toast(t('compose.scheduled_for', { time: absoluteTime(at.toISOString()) }));
      else if (out.message.status === 'scheduled') {
        offerUndo(held.seconds, path, (answer) => {
          const back = files.filter((f) => answer.attachment_ids.includes(f.id));
          composeAsked.value = { ...draft, files: back, ...(answer.conversation_removed ? { removed: path.conversationId } : {}) };
        });
      } else toast(t('compose.sent'));
      // The opener closes the dialog as it opens the new conversation.
      props.onStarted(out.conversation.id);
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  }
  return (
    <Dialog title={t('compose.new_title')} onClose={props.onClose} closeButton={false}>
      <form
        class="compose-form"
        onSubmit={send}
        onKeyDown={sendOnCtrlEnter}
        onDragOver={(e) => e.preventDefault()}
        onDrop={(e) => {
          // Pictures dropped into the text were taken there (in place).
          if (e.defaultPrevented || !e.dataTransfer?.files.length || !inboxId) return;
          e.preventDefault();
          void attach(e.dataTransfer.files);
        }}
      >
        {mailInboxes !== null && mailInboxes.length === 0 ? (
          <p class="muted">{t('compose.no_mail_inbox')}</p>
        ) : (
          <div class="field">
            <label for="new-inbox">{t('compose.inbox')}</label>
            {/* Files are uploads of the inbox: it stays as long as they are there. */}
            <select
              id="new-inbox"
              class="input"
              value={inboxId}
              disabled={files.length > 0}
              aria-describedby={files.length ? 'new-inbox-hint' : undefined}
              onChange={(e) => setInboxId(e.currentTarget.value)}
            >
              {(mailInboxes ?? []).map((i) => (
                <option key={i.id} value={i.id}>
                  {i.name}
                </option>
              ))}
            </select>
            {files.length > 0 && (
              <span class="hint" id="new-inbox-hint">
                {t('compose.inbox_files')}
              </span>
            )}
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
          <FormattedText
            id="new-body"
            label={t('compose.message')}
            html={body}
            onChange={setBody}
            editor={editor}
            onPictures={inboxId ? (pictures) => void attach(pictures, true) : undefined}
          />
        </div>
        <FileChips files={files} onRemove={(id) => setFiles((old) => old.filter((x) => x.id !== id))} />
        <FormError error={error} />
        <div class="compose-actions">
          <label class="btn btn-ghost compose-attach" title={t('compose.attach_hint')}>
            <input
              type="file"
              multiple
              class="visually-hidden"
              id="new-files"
              disabled={!inboxId}
              onChange={(e) => {
                const input = e.currentTarget;
                if (input.files?.length) void attach(input.files).then(() => (input.value = ''));
              }}
            />
            {uploading ? t('composer.uploading') : t('composer.attach')}
          </label>
          <button class="btn" type="button" onClick={props.onClose}>
            {t('compose.cancel')}
          </button>
          <LaterButton controls="new-later" open={later} disabled={busy || uploading > 0 || !inboxId} onToggle={() => setLater(!later)} />
          <button class="btn btn-primary" type="submit" disabled={busy || uploading > 0 || !inboxId} title={`${t('compose.send')} (Ctrl+Enter)`}>
            {busy ? t('compose.sending') : t('compose.send')}
          </button>
        </div>
      </form>
      {later && <LaterChoices id="new-later" onPick={(at) => void send(undefined, at)} />}
    </Dialog>
  );
}

/** Whether the editor's html holds any text (an empty editor gives '' or an empty paragraph). */
function hasText(html: string): boolean {
  return new DOMParser().parseFromString(html, 'text/html').body.textContent?.trim() !== '';
}

/** The formatted text box of the forward and new-conversation dialogs (the reply composer's editor). */
function FormattedText(props: {
  id: string;
  label: string;
  html: string;
  onChange: (html: string) => void;
  editor?: { current: RichTextHandle | null };
  onPictures?: (files: File[]) => void;
}) {
  const own = useRef<RichTextHandle>(null);
  const editor = props.editor ?? own;
  return (
    <div class="rich-field">
      <RichText
        ref={editor}
        id={props.id}
        initialHtml={props.html}
        placeholder=""
        attributes={{ 'aria-label': props.label }}
        onChange={props.onChange}
        onCaret={() => {}}
        onKeyDown={() => false}
        onBlur={() => {}}
        onPictures={props.onPictures}
      />
    </div>
  );
}

/** Send later in a compose dialog: the reply composer's quick times, shown under the form. */
function LaterButton(props: { controls: string; open: boolean; disabled: boolean; onToggle: () => void }) {
  return (
    <button class="btn" type="button" aria-expanded={props.open} aria-controls={props.controls} disabled={props.disabled} onClick={props.onToggle}>
      {t('composer.send_later')}
    </button>
  );
}

/** Outside the form: the custom time's own form must not send the message now. */
function LaterChoices(props: { id: string; onPick: (at: Date) => void }) {
  return (
    <section id={props.id} class="compose-later" aria-label={t('composer.send_later_title')}>
      <TimeChoices idPrefix={props.id} applyLabel={t('composer.schedule')} onPick={props.onPick} />
    </section>
  );
}

/** Uploads one file (the raw body) to `path` (an inbox's or a conversation's uploads); answers the stored file. */
async function upload(path: string, file: File): Promise<{ id: string; filename: string; size: number; url: string }> {
  const res = await fetch(`${path}?filename=${encodeURIComponent(file.name)}`, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': file.type || 'application/octet-stream', ...(workspaceId.value ? { 'svc-workspace': workspaceId.value } : {}) },
    body: file,
  });
  const answer = await res.json();
  if (!res.ok) throw new Error(answer?.error?.message ?? res.statusText);
  return answer;
}

/** The uploads the html shows in place (pictures pasted into the text). */
function shownUploads(html: string): string[] {
  return [...new Set([...html.matchAll(/\/v1\/attachments\/([A-Za-z0-9_]+)\/content/g)].map((x) => x[1]))];
}
