// Where mail goes (issue 33): the To/Cc/Bcc lines above the reply (prefilled with reply-all, editable
// as in Help Scout; untouched lines send nothing, so the server's reply-all decides), the recipients
// a sent reply went to, the participants list in the details, and "add as participant" for a thread
// joiner. Mounted by Composer.tsx, ConversationView.tsx and Details.tsx.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Conversation, errorText, type Message, must } from '../api';
import { t } from '../i18n';
import { isSignal, onEvent } from '../realtime';

type Address = { name: string | null; address: string };
type Participant = Conversation['participants'][number];
type Field = 'to' | 'cc' | 'bcc';

export function formatAddress(a: Address): string {
  if (!a.name) return a.address;
  return /[",<>@]/.test(a.name) ? `"${a.name.replace(/(["\\])/g, '\\$1')}" <${a.address}>` : `${a.name} <${a.address}>`;
}

/** `a@x, "Doe, Jo" <b@y>` → the addresses as the API takes them (commas inside quotes or <> kept). */
export function splitAddresses(text: string): string[] {
  const out: string[] = [];
  let current = '';
  let quoted = false;
  let angled = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\' && quoted) {
      current += ch + (text[++i] ?? '');
      continue;
    }
    if (ch === '"') quoted = !quoted;
    else if (ch === '<' && !quoted) angled = true;
    else if (ch === '>' && !quoted) angled = false;
    if ((ch === ',' || ch === ';') && !quoted && !angled) {
      if (current.trim()) out.push(current.trim());
      current = '';
      continue;
    }
    current += ch;
  }
  if (current.trim()) out.push(current.trim());
  return out;
}

/** Composers to tell when this tab changed a conversation's participants (before its event comes back). */
const changeListeners = new Set<(conversationId: string) => void>();
export function participantsChanged(conversationId: string) {
  for (const l of changeListeners) l(conversationId);
}

const joined = (list: readonly (Address | null)[]) =>
  list
    .filter((a): a is Address => a !== null)
    .map(formatAddress)
    .join(', ');

/**
 * The To/Cc/Bcc lines of the reply composer. `payload()` is what the reply sends: only the lines the
 * team changed. `reload()` after a send (the participants may have changed).
 */
export function useRecipients(conversationId: string, active: boolean) {
  const [defaults, setDefaults] = useState<{ to: string; cc: string } | null>(null);
  const [values, setValues] = useState<Record<Field, string>>({ to: '', cc: '', bcc: '' });
  const [isEmail, setIsEmail] = useState(false);
  // Cc and Bcc fold behind a "Cc/Bcc" button while empty (as in a mail client); opened, they stay.
  const [copiesOpen, setCopiesOpen] = useState(false);
  const firstHidden = useRef<Field | null>(null);
  // What is sent reads these, kept in step at every change: never a render's possibly older copy.
  const editedRef = useRef<Record<Field, boolean>>({ to: false, cc: false, bcc: false });
  const valuesRef = useRef(values);

  /**
   * Reply-all as the server sees it now. Lines the team edited stay as written, also when they
   * were edited while this was on its way; `reset` (after a send) forgets the edits first.
   */
  async function reload(reset = false) {
    if (reset) {
      editedRef.current = { to: false, cc: false, bcc: false };
      valuesRef.current = { ...valuesRef.current, bcc: '' };
      setValues(valuesRef.current);
    }
    try {
      const [c, r] = await Promise.all([
        must(api.GET('/v1/conversations/{conversationId}', { params: { path: { conversationId } } })),
        must(api.GET('/v1/conversations/{conversationId}/reply-recipients', { params: { path: { conversationId } } })),
      ]);
      setIsEmail(c.source === 'email');
      const d = { to: joined(r.to), cc: joined(r.cc) };
      setDefaults(d);
      const ed = editedRef.current;
      const old = valuesRef.current;
      valuesRef.current = { to: ed.to ? old.to : d.to, cc: ed.cc ? old.cc : d.cc, bcc: ed.bcc ? old.bcc : '' };
      setValues(valuesRef.current);
    } catch {
      setIsEmail(false);
    }
  }

  useEffect(() => {
    setCopiesOpen(false);
    void reload();
    const refresh = (id: string) => id === conversationId && void reload();
    changeListeners.add(refresh);
    const off = onEvent((ev) => {
      const c = ev.data.conversation as { id?: string } | undefined;
      if (!c || c.id !== conversationId || isSignal(ev)) return;
      const m = ev.data.message as Message | undefined;
      if (ev.type === 'conversation.updated' || (ev.type === 'message.created' && m?.direction === 'in')) void reload();
    });
    return () => {
      off();
      changeListeners.delete(refresh);
    };
  }, [conversationId]);

  function payload(): Partial<Record<Field, string[]>> {
    if (!isEmail || !active) return {};
    const out: Partial<Record<Field, string[]>> = {};
    for (const f of ['to', 'cc', 'bcc'] as const) if (editedRef.current[f]) out[f] = splitAddresses(valuesRef.current[f]);
    return out;
  }

  useEffect(() => {
    if (!copiesOpen || !firstHidden.current) return;
    document.getElementById(`recipients-${firstHidden.current}`)?.focus();
    firstHidden.current = null;
  }, [copiesOpen]);

  const shown = (['to', 'cc', 'bcc'] as const).filter((f) => f === 'to' || copiesOpen || values[f] !== '');
  const row =
    isEmail && active && defaults ? (
      <fieldset class="recipients" aria-label={t('recipients.legend')}>
        {shown.map((f) => (
          <div class="recipients-line" key={f}>
            <label for={`recipients-${f}`}>{t(`recipients.${f}`)}</label>
            <input
              id={`recipients-${f}`}
              class="input"
              value={values[f]}
              autoComplete="off"
              spellcheck={false}
              placeholder={f === 'bcc' ? t('recipients.bcc_placeholder') : ''}
              onInput={(e) => {
                const v = e.currentTarget.value;
                valuesRef.current = { ...valuesRef.current, [f]: v };
                setValues(valuesRef.current);
                // The ref at once: a reload answered before the next render must see the edit.
                editedRef.current = { ...editedRef.current, [f]: f === 'bcc' ? v.trim() !== '' : v !== defaults[f as 'to' | 'cc'] };
              }}
            />
            {f === 'to' && shown.length < 3 && (
              <button
                class="btn btn-ghost recipients-more"
                type="button"
                aria-expanded="false"
                onClick={() => {
                  firstHidden.current = (['cc', 'bcc'] as const).find((x) => !shown.includes(x)) ?? null;
                  setCopiesOpen(true);
                }}
              >
                {t('recipients.show_copies')}
              </button>
            )}
          </div>
        ))}
      </fieldset>
    ) : null;

  return { row, payload, reload, isEmail };
}

/** A message as events show it has no Bcc (events never carry it): the one the team already has keeps it. */
export function keepBcc(known: Message, live: Message): Message {
  return known.email?.bcc && live.email && !live.email.bcc ? { ...live, email: { ...live.email, bcc: known.email.bcc } } : live;
}

/** Who a sent or imported e-mail went to, under the message's author. Bcc only where the API shows it (the team). */
export function MessageRecipients(props: { message: Message }) {
  const e = props.message.email;
  if (!e || props.message.kind !== 'message' || (e.to.length === 0 && e.cc.length === 0)) return null;
  return (
    <p class="msg-recipients muted">
      {e.to.length > 0 && (
        <span>
          {t('recipients.to')}: {joined(e.to)}
        </span>
      )}
      {e.cc.length > 0 && (
        <span>
          {' · '}
          {t('recipients.cc')}: {joined(e.cc)}
        </span>
      )}
      {e.bcc && e.bcc.length > 0 && (
        <span>
          {' · '}
          {t('recipients.bcc')}: {joined(e.bcc)}
        </span>
      )}
    </p>
  );
}

/** A thread joiner's mail: offered to the team as a participant (Cc), never added by itself. */
export function AddParticipant(props: { conversationId: string; sender: Address; onAdded: (c: Conversation) => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  async function add() {
    setBusy(true);
    setError(null);
    try {
      const c = await must(api.GET('/v1/conversations/{conversationId}', { params: { path: { conversationId: props.conversationId } } }));
      if (!c.participants.some((p) => p.address.toLowerCase() === props.sender.address.toLowerCase())) {
        props.onAdded(
          await must(
            api.PATCH('/v1/conversations/{conversationId}', {
              params: { path: { conversationId: props.conversationId } },
              body: { participants: [...c.participants, { name: props.sender.name, address: props.sender.address, role: 'cc' }] },
            }),
          ),
        );
        participantsChanged(props.conversationId);
      }
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  }
  return (
    <>
      <button class="btn btn-ghost" type="button" disabled={busy} onClick={() => void add()}>
        {t('recipients.add_participant', { address: props.sender.address })}
      </button>
      {error && (
        <span class="form-error" role="alert">
          {error}
        </span>
      )}
    </>
  );
}

/** The participants in the conversation's details: who a reply goes to, each removable; new ones added as Cc. */
export function Participants(props: { conversation: Conversation; onChange: (patch: { participants: Participant[] }) => Promise<void> }) {
  const conv = props.conversation;
  const [text, setText] = useState('');
  if (conv.source !== 'email') return null;
  const list = conv.participants;
  function add(e: Event) {
    e.preventDefault();
    const added = splitAddresses(text).map((address) => ({ name: null, address, role: 'cc' as const }));
    if (!added.length) return;
    setText('');
    void props.onChange({ participants: [...list, ...added] });
  }
  return (
    <div class="field">
      <span id="participants-label">{t('recipients.participants')}</span>
      {list.length === 0 ? (
        <p class="muted">{t('recipients.no_participants')}</p>
      ) : (
        <ul role="list" class="labels" aria-labelledby="participants-label">
          {list.map((p) => (
            <li key={p.address} class="label-chip" title={p.role === 'to' ? t('recipients.to') : t('recipients.cc')}>
              {formatAddress(p)}
              <button
                type="button"
                class="btn-ghost label-remove"
                aria-label={t('recipients.remove_participant', { address: p.address })}
                onClick={() => void props.onChange({ participants: list.filter((x) => x.address !== p.address) })}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <form onSubmit={add}>
        <label class="visually-hidden" for="add-participant">
          {t('recipients.add')}
        </label>
        <input
          id="add-participant"
          class="input"
          type="text"
          autoComplete="off"
          placeholder={t('recipients.add')}
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
        />
      </form>
    </div>
  );
}
