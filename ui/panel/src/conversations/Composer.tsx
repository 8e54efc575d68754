// Reply (sent through the conversation's channel) or note (never sent), written in the formatted
// editor (./editor/RichText.tsx) and sent as html (the server makes the plain part). The draft survives reloads.
// `#` at the start of a word opens the saved-reply picker (./SavedReplyPicker.tsx). A reply sent while
// a teammate is writing one, or after a teammate replied since the conversation was opened, asks first
// (./Presence.tsx).

import { forwardRef } from 'preact/compat';
import { useEffect, useImperativeHandle, useRef, useState } from 'preact/hooks';
import { api, errorText, type Message, must, type Schemas } from '../api';
import { FormError } from '../components/FormError';
import { absoluteTime, t } from '../i18n';
import { actionToast, me, memberName, toast, workspaceId } from '../state';
import { RichText, type RichTextHandle } from './editor/RichText';
import { FileChips } from './FileChips';
import { joinNames, type Presence } from './Presence';
import { useRecipients } from './Recipients';
import { comboboxProps, hashQueryAt, SavedReplyPicker, useSavedReplies } from './SavedReplyPicker';
import { SendLaterButton } from './SendLater';

export interface ComposerHandle {
  focus(kind: 'message' | 'note'): void;
  /** A cancelled scheduled reply's text, back into the reply composer. */
  restore(html: string): void;
}

const draftKey = (id: string, kind: string) => `svc.draft.${id}.${kind}`;
/** How often a reply being written tells the contact "the team is typing". */
const TYPING_SIGNAL_EVERY_MS = 2_500;
/** A draft is saved on the server this long after the last change (restored on any device). */
const DRAFT_SAVE_AFTER_MS = 800;

export const Composer = forwardRef<
  ComposerHandle,
  { conversationId: string; onSent: (m: Message) => void; onUndone?: (messageId: string) => void; presence?: Presence }
>(function Composer(props, ref) {
  const [kind, setKind] = useState<'message' | 'note'>('message');
  // The html written so far ('' when empty).
  const [body, setBody] = useState(() => localStorage.getItem(draftKey(props.conversationId, 'message')) ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [collision, setCollision] = useState<string | null>(null);
  const area = useRef<RichTextHandle>(null);
  const typingSentAt = useRef(0);
  const [hash, setHash] = useState<{ start: number; query: string } | null>(null);
  const [picker, setActive] = useSavedReplies(hash ? hash.query : null);
  const pickerOpen = hash !== null;
  const recipients = useRecipients(props.conversationId, kind === 'message');

  useImperativeHandle(ref, () => ({
    focus: chooseKind,
    restore: (html: string) => {
      area.current?.setHtml(html);
      changeBody(html);
      area.current?.focus();
    },
  }));

  // The server's draft (saved from any device) and which teammates have one here.
  const [teammateDrafts, setTeammateDrafts] = useState<Schemas['ConversationDrafts']['teammates']>([]);
  const typedHere = useRef(false);
  const saveTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  /** The draft save on its way: a send waits for it, or the draft could land after the send removed it. */
  const draftSaving = useRef<Promise<unknown>>(Promise.resolve());
  useEffect(() => {
    let gone = false;
    typedHere.current = false;
    void api.GET('/v1/conversations/{conversationId}/draft', { params: { path: { conversationId: props.conversationId } } }).then(({ data }) => {
      if (gone || !data) return;
      setTeammateDrafts(data.teammates);
      const d = data.draft;
      if (!d?.html || typedHere.current) return;
      localStorage.setItem(draftKey(props.conversationId, d.kind), d.html);
      setKind(d.kind);
      area.current?.setHtml(d.html);
      setBody(d.html);
    });
    return () => {
      gone = true;
      clearTimeout(saveTimer.current);
    };
  }, [props.conversationId]);

  function saveDraft(html: string, k: 'message' | 'note') {
    clearTimeout(saveTimer.current);
    const conversationId = props.conversationId;
    saveTimer.current = setTimeout(() => {
      draftSaving.current = api.PUT('/v1/conversations/{conversationId}/draft', { params: { path: { conversationId } }, body: { kind: k, html } });
    }, DRAFT_SAVE_AFTER_MS);
  }

  // The draft is stored in the same task as the change: an effect runs after paint, and one from an
  // earlier render could overwrite the last keys just before a reload.
  function changeBody(value: string, k = kind) {
    const key = draftKey(props.conversationId, k);
    if (value) localStorage.setItem(key, value);
    else localStorage.removeItem(key);
    setBody(value);
    typedHere.current = true;
    saveDraft(value, k);
  }

  /** Choosing Reply or Note (a chip or r/n) is choosing to write one: the writing starts in the box. */
  function chooseKind(k: 'message' | 'note') {
    // Focus now, in the same keystroke: keys typed right after must land in the text box.
    area.current?.focus();
    setKind(k);
    setCollision(null);
    const draft = localStorage.getItem(draftKey(props.conversationId, k)) ?? '';
    if (k !== kind) area.current?.setHtml(draft);
    setBody(draft);
  }

  function findHash() {
    const before = area.current?.textBeforeCaret() ?? '';
    setHash(hashQueryAt(before, before.length));
  }

  async function choose(reply: Schemas['SavedReply']) {
    const at = hash;
    setHash(null);
    if (!at) return;
    let rendered: { body: string; html: string | null };
    try {
      rendered = await must(
        api.POST('/v1/conversations/{conversationId}/render-reply', {
          params: { path: { conversationId: props.conversationId } },
          body: { saved_reply_id: reply.id },
        }),
      );
    } catch (e) {
      setError(t('picker.failed', { error: errorText(e) }));
      return;
    }
    const box = area.current;
    if (!box) return;
    const typed = `#${at.query}`;
    // The text may have changed while the reply was rendered: replace the #word only if it is still
    // before the caret. The caret ends after the reply, so keys typed right after land there.
    box.replaceBeforeCaret(box.textBeforeCaret().endsWith(typed) ? typed.length : 0, rendered.body, rendered.html);
    changeBody(box.html());
  }

  // Files are uploaded as soon as they are chosen or dropped, then sent with the message by id.
  // Pictures pasted or dropped into the text are uploads too, shown in place (`inline`): they go
  // with the message while the text still shows them, as inline parts of the mail.
  const [files, setFiles] = useState<{ id: string; filename: string; size: number; inline?: boolean }[]>([]);
  const [uploading, setUploading] = useState(0);
  async function attach(list: FileList | File[], inline = false) {
    for (const file of Array.from(list)) {
      setUploading((n) => n + 1);
      try {
        const res = await fetch(`/v1/conversations/${props.conversationId}/attachments?filename=${encodeURIComponent(file.name)}`, {
          method: 'POST',
          credentials: 'same-origin',
          headers: { 'content-type': file.type || 'application/octet-stream', ...(workspaceId.value ? { 'svc-workspace': workspaceId.value } : {}) },
          body: file,
        });
        const answer = await res.json();
        if (!res.ok) throw new Error(answer?.error?.message ?? res.statusText);
        setFiles((old) => [...old, { id: answer.id, filename: answer.filename, size: answer.size, inline }]);
        if (inline) {
          area.current?.insertImage(answer.url, answer.filename);
          changeBody(area.current?.html() ?? '');
        }
      } catch (e) {
        setError(t('composer.attach_failed', { name: file.name, error: errorText(e) }));
      } finally {
        setUploading((n) => n - 1);
      }
    }
  }

  /** What goes with the message: the attachments, and the pictures the text still shows. */
  function sentFiles(html: string): string[] {
    return files.filter((f) => !f.inline || html.includes(`/v1/attachments/${f.id}/content`)).map((f) => f.id);
  }

  /** Why a reply should wait for a second look, or null: someone else replied or is writing one. */
  function collisionWarning(): string | null {
    const p = props.presence;
    if (!p || kind !== 'message') return null;
    if (p.typing.length) return t('composer.collision_typing', { name: joinNames(p.typing.map((x) => x.name)) });
    if (p.repliedBy) return t('composer.collision_replied', { name: p.repliedBy });
    return null;
  }

  /** Undo send: the held reply is cancelled and its text goes back into the composer. */
  async function undo(conversationId: string, messageId: string) {
    try {
      const back = await must(
        api.DELETE('/v1/conversations/{conversationId}/messages/{messageId}/schedule', { params: { path: { conversationId, messageId } } }),
      );
      props.onUndone?.(messageId);
      if (conversationId !== props.conversationId) return;
      area.current?.setHtml(back.html ?? back.body);
      changeBody(back.html ?? back.body);
      area.current?.focus();
    } catch (e) {
      toast(t('composer.undo_failed', { error: errorText(e) }));
    }
  }

  async function send(anyway = false, later?: Date, unlessCustomerReplies = false) {
    if (!body || busy || uploading) return;
    // A reply scheduled for later races nobody now.
    const warning = anyway || later ? null : collisionWarning();
    setCollision(warning);
    if (warning) return;
    if (anyway) props.presence?.acknowledge();
    setBusy(true);
    setError(null);
    // A draft save still waiting must not land after the send (which removes the draft).
    clearTimeout(saveTimer.current);
    try {
      await draftSaving.current.catch(() => undefined);
      // Undo send: an e-mail reply is held for the person's delay (a stored job sends it then).
      const hold = kind === 'message' && recipients.isEmail && !later ? (me.value?.person.undo_send_seconds ?? 10) : 0;
      const sendAt = later
        ? { send_at: later.toISOString(), ...(unlessCustomerReplies ? { unless_customer_replies: true } : {}) }
        : hold > 0
          ? { send_at: new Date(Date.now() + hold * 1000).toISOString() }
          : {};
      const m = await must(
        api.POST('/v1/conversations/{conversationId}/messages', {
          params: { path: { conversationId: props.conversationId } },
          body: { kind, html: body, ...(sentFiles(body).length ? { attachment_ids: sentFiles(body) } : {}), ...recipients.payload(), ...sendAt },
        }),
      );
      props.onSent(m);
      if (later) toast(t('composer.scheduled_for', { time: absoluteTime(later.toISOString()) }));
      else if (m.status === 'scheduled') {
        const conversationId = props.conversationId;
        actionToast(t('composer.sending'), { label: t('composer.undo'), run: () => void undo(conversationId, m.id) }, hold * 1000);
      }
      if (kind === 'message') void recipients.reload(true);
      setFiles([]);
      area.current?.setHtml('');
      changeBody('');
      // The server removed the draft with the send.
      clearTimeout(saveTimer.current);
    } catch (e) {
      setError(t('composer.failed', { error: errorText(e) }));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form
      class={`composer${kind === 'note' ? ' note' : ''}`}
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
      onDragOver={(e) => e.preventDefault()}
      onDrop={(e) => {
        // Pictures dropped into the text were taken there (in place).
        if (e.defaultPrevented || !e.dataTransfer?.files.length) return;
        e.preventDefault();
        void attach(e.dataTransfer.files);
      }}
    >
      <div class="composer-tabs" role="group" aria-label={t('composer.reply')}>
        <button class="chip" type="button" aria-pressed={kind === 'message'} onClick={() => chooseKind('message')} title={`${t('composer.reply')} (r)`}>
          {t('composer.reply')}
        </button>
        <button class="chip" type="button" aria-pressed={kind === 'note'} onClick={() => chooseKind('note')} title={`${t('composer.note')} (n)`}>
          {t('composer.note')}
        </button>
      </div>
      {recipients.row}
      <label class="visually-hidden" for="composer-body">
        {kind === 'note' ? t('composer.note') : t('composer.reply')}
      </label>
      <div class="composer-field">
        <RichText
          ref={area}
          id="composer-body"
          initialHtml={body}
          placeholder={kind === 'note' ? t('composer.note_placeholder') : t('composer.reply_placeholder')}
          attributes={{
            'aria-label': kind === 'note' ? t('composer.note') : t('composer.reply'),
            'aria-describedby': 'composer-hint',
            ...comboboxProps(pickerOpen, picker),
          }}
          onChange={(html) => {
            changeBody(html);
            findHash();
            if (kind === 'message' && Date.now() - typingSentAt.current > TYPING_SIGNAL_EVERY_MS) {
              typingSentAt.current = Date.now();
              void api.POST('/v1/conversations/{conversationId}/typing', { params: { path: { conversationId: props.conversationId } } });
            }
          }}
          onCaret={findHash}
          onBlur={() => setHash(null)}
          onPictures={(pictures) => void attach(pictures, true)}
          onKeyDown={(e) => {
            if (pickerOpen && !e.ctrlKey && !e.metaKey) {
              const n = picker.replies.length;
              if (e.key === 'ArrowDown' && n) {
                e.preventDefault();
                setActive((picker.active + 1) % n);
                return true;
              }
              if (e.key === 'ArrowUp' && n) {
                e.preventDefault();
                setActive((picker.active - 1 + n) % n);
                return true;
              }
              if (e.key === 'Enter' && n) {
                e.preventDefault();
                void choose(picker.replies[picker.active]);
                return true;
              }
              if (e.key === 'Escape') {
                e.preventDefault();
                e.stopPropagation();
                setHash(null);
                return true;
              }
            }
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
              e.preventDefault();
              void send();
              return true;
            }
            if (e.key === 'Escape') (document.activeElement as HTMLElement | null)?.blur();
            return false;
          }}
        />
        <SavedReplyPicker open={pickerOpen} query={hash?.query ?? ''} state={picker} onChoose={(r) => void choose(r)} onHover={setActive} />
      </div>
      {teammateDrafts.length > 0 && (
        <p class="muted draft-notice" role="status">
          {t('composer.teammate_draft', { name: joinNames(teammateDrafts.map((d) => memberName(d.member_id, t('conv.you'), t('conv.team')))) })}
        </p>
      )}
      <FormError error={error} />
      {collision && (
        <div class="collision" role="alert">
          <p>{collision}</p>
          <div class="row-actions">
            <button class="btn btn-primary" type="button" onClick={() => void send(true)}>
              {t('composer.send_anyway')}
            </button>
            <button
              class="btn"
              type="button"
              onClick={() => {
                setCollision(null);
                area.current?.focus();
              }}
            >
              {t('composer.dont_send')}
            </button>
          </div>
        </div>
      )}
      <FileChips files={files} onRemove={(id) => setFiles((old) => old.filter((x) => x.id !== id))} />
      <div class="composer-foot">
        <label class="btn btn-ghost" title={t('composer.attach')}>
          <input
            type="file"
            multiple
            class="visually-hidden"
            onChange={(e) => {
              const input = e.currentTarget;
              if (input.files?.length) void attach(input.files).then(() => (input.value = ''));
            }}
          />
          {uploading ? t('composer.uploading') : t('composer.attach')}
        </label>
        <span class="muted" id="composer-hint">
          {t('composer.hint')}
        </span>
        {kind === 'message' && recipients.isEmail && (
          <SendLaterButton disabled={busy || uploading > 0 || !body} onPick={(at, unless) => void send(false, at, unless)} />
        )}
        <button
          class="btn btn-primary"
          type="submit"
          disabled={busy || uploading > 0 || !body}
          title={`${kind === 'note' ? t('composer.add_note') : t('composer.send')} (Ctrl+Enter)`}
        >
          {busy ? t('composer.sending') : kind === 'note' ? t('composer.add_note') : t('composer.send')}
        </button>
      </div>
    </form>
  );
});
