// Reply (sent through the conversation's channel) or note (never sent). The draft survives reloads.
import { forwardRef } from 'preact/compat';
import { useImperativeHandle, useRef, useState } from 'preact/hooks';
import { api, errorText, must, type Message } from '../api';
import { t } from '../i18n';

export interface ComposerHandle {
  focus(kind: 'message' | 'note'): void;
}

const draftKey = (id: string, kind: string) => `svc.draft.${id}.${kind}`;
/** How often a reply being written tells the contact "the team is typing". */
const TYPING_SIGNAL_EVERY_MS = 2_500;

export const Composer = forwardRef<ComposerHandle, { conversationId: string; onSent: (m: Message) => void }>(function Composer(props, ref) {
  const [kind, setKind] = useState<'message' | 'note'>('message');
  const [body, setBody] = useState(() => localStorage.getItem(draftKey(props.conversationId, 'message')) ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const area = useRef<HTMLTextAreaElement>(null);
  const typingSentAt = useRef(0);

  useImperativeHandle(ref, () => ({
    focus(k) {
      // Focus now, in the same keystroke: keys typed right after must land in the text box.
      area.current?.focus();
      switchKind(k);
    },
  }));

  // Stored on every keystroke (not after the render): a reload right after typing keeps every character.
  function updateBody(value: string) {
    setBody(value);
    const key = draftKey(props.conversationId, kind);
    if (value) localStorage.setItem(key, value);
    else localStorage.removeItem(key);
  }

  function switchKind(k: 'message' | 'note') {
    setKind(k);
    setBody(localStorage.getItem(draftKey(props.conversationId, k)) ?? '');
  }

  async function send() {
    if (!body.trim() || busy) return;
    setBusy(true);
    setError(null);
    try {
      const m = await must(api.POST('/v1/conversations/{conversationId}/messages', { params: { path: { conversationId: props.conversationId } }, body: { kind, body } }));
      props.onSent(m);
      setBody('');
      localStorage.removeItem(draftKey(props.conversationId, kind));
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
    >
      <div class="composer-tabs" role="group" aria-label={t('composer.reply')}>
        <button class="chip" type="button" aria-pressed={kind === 'message'} onClick={() => switchKind('message')} title={`${t('composer.reply')} (r)`}>
          {t('composer.reply')}
        </button>
        <button class="chip" type="button" aria-pressed={kind === 'note'} onClick={() => switchKind('note')} title={`${t('composer.note')} (n)`}>
          {t('composer.note')}
        </button>
      </div>
      <label class="visually-hidden" for="composer-body">
        {kind === 'note' ? t('composer.note') : t('composer.reply')}
      </label>
      <textarea
        id="composer-body"
        ref={area}
        class="textarea"
        rows={4}
        value={body}
        placeholder={kind === 'note' ? t('composer.note_placeholder') : t('composer.reply_placeholder')}
        onInput={(e) => {
          updateBody(e.currentTarget.value);
          if (kind === 'message' && Date.now() - typingSentAt.current > TYPING_SIGNAL_EVERY_MS) {
            typingSentAt.current = Date.now();
            void api.POST('/v1/conversations/{conversationId}/typing', { params: { path: { conversationId: props.conversationId } } });
          }
        }}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
            e.preventDefault();
            void send();
          }
          if (e.key === 'Escape') area.current?.blur();
        }}
      />
      {error && (
        <p class="error-text" role="alert">
          {error}
        </p>
      )}
      <div class="composer-foot">
        <span class="muted">{t('composer.hint')}</span>
        <button class="btn btn-primary" type="submit" disabled={busy || !body.trim()} title={`${kind === 'note' ? t('composer.add_note') : t('composer.send')} (Ctrl+Enter)`}>
          {busy ? t('composer.sending') : kind === 'note' ? t('composer.add_note') : t('composer.send')}
        </button>
      </div>
    </form>
  );
});
