// The chat panel, loaded when the visitor opens the widget: header with availability, the greeting
// and the conversation live, the composer (with the offline e-mail question first when asked), the
// team's typing, a reconnecting banner, and for identified visitors all of their conversations.
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { MessageText } from '../../shared/rich';
import { FileView } from './attachment';
import { ApiError, type Link, type VisitorConversation, type VisitorMessage, type WidgetConfig } from './client';
import { uploadFile } from './files';
import { sheet, type Widget } from './host';
import { locale, t } from './i18n';
import panelCss from './panel.css?inline';
import { availability, EmailBesideMessage, emailFirst, PRESENCE_MS, Who } from './presence';
import { RatingPrompt } from './rating';

const TYPING_SHOWN_MS = 6_000;
const TYPING_SEND_EVERY_MS = 2_500;
/** Without a live socket (a network drop, or a host CSP whose connect-src has no ws:/wss: for svc), new messages are fetched this often while open. */
const POLL_MS = 4_000;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function mountPanel(widget: Widget) {
  widget.root.adoptedStyleSheets = [...widget.root.adoptedStyleSheets, sheet(panelCss)];
  const container = document.createElement('div');
  container.className = 'panel-host';
  container.hidden = true;
  widget.root.prepend(container);
  let focusOnShow = () => {};
  let refresh = () => {};
  render(<Chat widget={widget} registerFocus={(f) => (focusOnShow = f)} registerRefresh={(f) => (refresh = f)} />, container);
  return {
    show() {
      container.hidden = false;
      focusOnShow();
      refresh();
    },
    hide() {
      container.hidden = true;
    },
  };
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function Chat({
  widget,
  registerFocus,
  registerRefresh,
}: {
  widget: Widget;
  registerFocus: (f: () => void) => void;
  registerRefresh: (f: () => void) => void;
}) {
  const { client } = widget;
  // Presence is asked again each time the chat opens and while it stays open: it follows the team.
  const [config, setConfig] = useState<WidgetConfig>(widget.config);
  const [link, setLink] = useState<Link>(client.link);
  const [conversations, setConversations] = useState<VisitorConversation[]>([]);
  const [current, setCurrent] = useState<string | null>(client.session()?.conversation_id ?? null);
  const [listing, setListing] = useState(false);
  const [messages, setMessages] = useState<VisitorMessage[]>([]);
  const messagesRef = useRef(messages);
  messagesRef.current = messages;
  const [teamTyping, setTeamTyping] = useState(false);
  const [body, setBody] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [files, setFiles] = useState<File[]>([]);
  const [dragging, setDragging] = useState(false);
  const fileInput = useRef<HTMLInputElement>(null);
  const offlineAsk = !config.team_online && config.channel.ask_email_offline;
  // The e-mail question comes first only while nobody is online; with someone online the visitor
  // writes at once (a channel that needs an address asks for it beside the first message).
  const [askEmail, setAskEmail] = useState(() => !client.session() && emailFirst(config));
  /** The visitor chose to write without an address: a later presence check does not ask again. */
  const skipped = useRef(false);
  const [email, setEmail] = useState('');
  const emailWithMessage = !askEmail && !client.session() && !config.channel.allow_anonymous;
  const area = useRef<HTMLTextAreaElement>(null);
  const emailInput = useRef<HTMLInputElement>(null);
  const thread = useRef<HTMLDivElement>(null);
  const currentRef = useRef(current);
  currentRef.current = current;
  /** The conversation `show` was last asked for (set before its thread is fetched). */
  const shownRef = useRef(current);
  const lastTypingSent = useRef(0);
  const typingTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  registerFocus(() => (askEmail ? emailInput.current : area.current)?.focus());
  async function refreshPresence() {
    try {
      const fresh = await client.config();
      widget.config = fresh;
      setConfig(fresh);
      if (client.session() || skipped.current) return;
      const ask = emailFirst(fresh);
      setAskEmail((was) => {
        if (was !== ask) setTimeout(() => (ask ? emailInput.current : area.current)?.focus());
        return ask;
      });
    } catch {
      /* the header keeps what it last knew */
    }
  }
  registerRefresh(() => void refreshPresence());

  async function loadConversations(): Promise<VisitorConversation[]> {
    if (!client.session()) return [];
    const list = await client.conversations();
    setConversations(list);
    return list;
  }
  async function show(id: string | null) {
    shownRef.current = id;
    setCurrent(id);
    client.remember({ conversation_id: id });
    if (!id) {
      setMessages([]);
      return;
    }
    const fetched = await client.messages(id);
    if (shownRef.current !== id) return;
    // A message that came live while the thread was on its way is newer than it: kept, not replaced.
    setMessages((ms) => {
      const known = new Set(fetched.map((m) => m.id));
      const live = ms.filter((m) => m.conversation_id === id && !known.has(m.id));
      return live.length ? [...fetched, ...live] : fetched;
    });
  }
  /** The list opens with each conversation's latest message as it is now (the shown one's moved on live). */
  function openList() {
    setListing(true);
    loadConversations().catch(() => undefined);
  }
  /** The visitor picked a conversation (or a new one) from the list: the list closes. */
  async function choose(id: string | null) {
    setListing(false);
    await show(id);
  }
  // A reload (at the start, and each time the live connection comes back) leaves the list as the
  // visitor left it: it used to close a list they had just opened when the connection went live.
  async function reload() {
    setError(null);
    try {
      const list = await loadConversations();
      const id = current && list.some((c) => c.id === current) ? current : (list[0]?.id ?? null);
      await show(id);
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 401)) setError(t('load_failed', { error: errorText(e) }));
    }
  }

  useEffect(() => {
    void reload();
    client.connect();
    const offLink = client.onLink((l) => {
      setLink(l);
      if (l === 'live') void reload();
    });
    const offFrame = client.onFrame((f) => {
      if (f.type === 'message') {
        if (f.message.conversation_id === currentRef.current) {
          setMessages((ms) => (ms.some((m) => m.id === f.message.id) ? ms : [...ms, f.message]));
          if (f.message.author.type === 'team') setTeamTyping(false);
        } else void loadConversations();
      } else if (f.type === 'typing' && f.conversation_id === currentRef.current) {
        setTeamTyping(true);
        clearTimeout(typingTimer.current);
        typingTimer.current = setTimeout(() => setTeamTyping(false), TYPING_SHOWN_MS);
      } else if (f.type === 'resync') void reload();
    });
    return () => {
      offLink();
      offFrame();
    };
  }, []);

  useEffect(() => {
    const timer = setInterval(() => void refreshPresence(), PRESENCE_MS);
    return () => clearInterval(timer);
  }, []);

  useEffect(() => {
    let polling = false;
    const timer = setInterval(async () => {
      const id = currentRef.current;
      if (client.link === 'live' || !id || polling || !client.session()) return;
      polling = true;
      try {
        const last = messagesRef.current.at(-1)?.id;
        const fresh = await client.messages(id, last);
        if (fresh.length && currentRef.current === id) setMessages((ms) => [...ms, ...fresh.filter((m) => !ms.some((x) => x.id === m.id))]);
      } catch {
        /* the next round tries again */
      } finally {
        polling = false;
      }
    }, POLL_MS);
    return () => clearInterval(timer);
  }, []);

  useEffect(() => {
    const el = thread.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [messages.length, teamTyping]);

  async function saveEmail(e: Event) {
    e.preventDefault();
    if (!EMAIL.test(email.trim())) {
      setError(t('email_invalid'));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await client.open({ email: email.trim() });
      client.connect();
      setAskEmail(false);
      setTimeout(() => area.current?.focus());
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }

  async function send(e?: Event) {
    e?.preventDefault();
    const text = body.trim();
    if ((!text && !files.length) || busy) return;
    if (emailWithMessage && !EMAIL.test(email.trim())) {
      setError(t('email_invalid'));
      emailInput.current?.focus();
      return;
    }
    setBusy(true);
    setError(null);
    try {
      if (!client.session()) await client.open(emailWithMessage ? { email: email.trim() } : undefined);
      let id = current;
      let rest = text;
      if (!id) {
        // Files belong to a conversation: a first message starts it (the file names when there is no text).
        const started = await client.start(text || files.map((f) => f.name).join(', '));
        id = started.conversation.id;
        rest = '';
        client.remember({ conversation_id: id });
        shownRef.current = id;
        setCurrent(id);
        setMessages([started.message]);
        setConversations((cs) => [started.conversation, ...cs]);
        setBody('');
      }
      if (rest || files.length) {
        const conversationId = id;
        const uploaded = await Promise.all(files.map((f) => uploadFile(client, conversationId, f)));
        const m = await client.post(conversationId, rest, uploaded.length ? uploaded.map((a) => a.id) : undefined);
        setMessages((ms) => (ms.some((x) => x.id === m.id) ? ms : [...ms, m]));
      }
      client.connect();
      setBody('');
      setFiles([]);
    } catch (err) {
      setError(t('send_failed', { error: errorText(err) }));
    } finally {
      setBusy(false);
      area.current?.focus();
    }
  }

  function addFiles(list: FileList | null | undefined) {
    if (list?.length) setFiles((fs) => [...fs, ...Array.from(list)]);
  }

  function typed(value: string) {
    setBody(value);
    const now = Date.now();
    if (current && value.trim() && now - lastTypingSent.current > TYPING_SEND_EVERY_MS) {
      lastTypingSent.current = now;
      client.typing(current).catch(() => {});
    }
  }

  const title = config.inbox.name;
  return (
    <section
      class={`panel${dragging ? ' dragging' : ''}`}
      role="dialog"
      aria-label={t('chat_with', { name: title })}
      onDragOver={(e) => {
        if (askEmail || !e.dataTransfer?.types.includes('Files')) return;
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={(e) => {
        if (e.currentTarget === e.target) setDragging(false);
      }}
      onDrop={(e) => {
        setDragging(false);
        if (askEmail || !e.dataTransfer?.files.length) return;
        e.preventDefault();
        addFiles(e.dataTransfer.files);
        area.current?.focus();
      }}
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.stopPropagation();
          widget.close();
        }
      }}
    >
      <header class="head">
        <div class="head-text">
          <h2 class="title">{title}</h2>
          <p class="availability">
            <span class={`dot${config.team_online ? ' on' : ''}`} aria-hidden="true" />
            {availability(config)}
          </p>
        </div>
        <button type="button" class="icon-btn" aria-label={t('close_chat')} title={`${t('close_chat')} (Esc)`} onClick={() => widget.close()}>
          <svg viewBox="0 0 24 24" aria-hidden="true">
            <path d="M6.4 5 12 10.6 17.6 5 19 6.4 13.4 12l5.6 5.6-1.4 1.4-5.6-5.6L6.4 19 5 17.6 10.6 12 5 6.4z" />
          </svg>
        </button>
      </header>
      {link === 'reconnecting' && (
        <p class="banner" role="status">
          {t('reconnecting')}
        </p>
      )}
      {conversations.length > 1 && (
        <nav class="convs" aria-label={t('conversations')}>
          {listing ? (
            <ul>
              {conversations.map((c) => (
                <li key={c.id}>
                  <button type="button" class="conv" aria-current={c.id === current ? 'true' : undefined} onClick={() => void choose(c.id)}>
                    <span class="conv-title">{c.subject ?? new Date(c.created_at).toLocaleString(locale(), { dateStyle: 'medium', timeStyle: 'short' })}</span>
                    {c.latest && (
                      <span class="conv-latest">
                        {c.latest.from === 'contact' ? t('you') : t('team')}: {c.latest.text}
                      </span>
                    )}
                  </button>
                </li>
              ))}
              <li>
                <button type="button" class="conv new" onClick={() => void choose(null)}>
                  {t('new_conversation')}
                </button>
              </li>
            </ul>
          ) : (
            <button type="button" class="link-btn" aria-expanded="false" onClick={openList}>
              {t('conversations')} ({conversations.length})
            </button>
          )}
        </nav>
      )}
      <div
        class="thread"
        ref={thread}
        role="log"
        aria-live="polite"
        aria-label={t('messages')}
        tabIndex={0}
        onLoadCapture={(e) => {
          // A preview that loads after the thread scrolled down pushes the end out of view: follow it when the visitor was at the end.
          const el = thread.current;
          const grown = (e.target as HTMLElement).offsetHeight;
          if (el && el.scrollHeight - el.scrollTop - el.clientHeight <= grown + 80) el.scrollTop = el.scrollHeight;
        }}
      >
        {config.channel.greeting && (
          <div class="bubble team greeting">
            <p>{config.channel.greeting}</p>
          </div>
        )}
        {messages.map((m) => (
          <div key={m.id} class={`bubble ${m.author.type === 'contact' ? 'me' : 'team'}`}>
            <Who author={m.author} />
            <MessageText body={m.body} html={m.html} />
            {m.attachments.map((a) => (
              <FileView key={a.id} widget={widget} attachment={a} />
            ))}
            <time dateTime={m.created_at}>{new Date(m.created_at).toLocaleTimeString(locale(), { hour: '2-digit', minute: '2-digit' })}</time>
          </div>
        ))}
      </div>
      {current && conversations.find((c) => c.id === current)?.status === 'closed' && <RatingPrompt key={current} widget={widget} conversationId={current} />}
      <p class="typing" role="status">
        {teamTyping ? t('team_typing') : ''}
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {askEmail ? (
        <form class="email" onSubmit={saveEmail} noValidate>
          <label for="svc-email">{offlineAsk ? t('email_ask_offline') : t('email_ask')}</label>
          <div class="row">
            <input
              id="svc-email"
              ref={emailInput}
              type="email"
              autocomplete="email"
              placeholder={t('email_label')}
              aria-label={t('email_label')}
              value={email}
              onInput={(e) => setEmail(e.currentTarget.value)}
            />
            <button type="submit" class="btn" disabled={busy}>
              {t('email_save')}
            </button>
          </div>
          {config.channel.allow_anonymous && (
            <button
              type="button"
              class="link-btn"
              onClick={() => {
                skipped.current = true;
                setAskEmail(false);
                setTimeout(() => area.current?.focus());
              }}
            >
              {t('skip')}
            </button>
          )}
        </form>
      ) : (
        <form class="composer" onSubmit={send}>
          {dragging && <p class="drop-hint">{t('drop_files')}</p>}
          {files.length > 0 && (
            <ul class="pending" aria-label={t('attach')}>
              {files.map((f, i) => (
                <li key={`${i}-${f.name}`}>
                  <span>{f.name}</span>
                  <button
                    type="button"
                    class="icon-btn small"
                    aria-label={t('remove_file', { name: f.name })}
                    onClick={() => setFiles((fs) => fs.filter((_, j) => j !== i))}
                  >
                    ×
                  </button>
                </li>
              ))}
            </ul>
          )}
          {emailWithMessage && <EmailBesideMessage inputRef={emailInput} value={email} onInput={setEmail} />}
          <input
            ref={fileInput}
            class="visually-hidden"
            type="file"
            multiple
            tabIndex={-1}
            aria-hidden="true"
            onChange={(e) => {
              addFiles(e.currentTarget.files);
              e.currentTarget.value = '';
            }}
          />
          <button type="button" class="icon-btn attach" aria-label={t('attach')} title={t('attach')} onClick={() => fileInput.current?.click()}>
            <svg viewBox="0 0 24 24" aria-hidden="true">
              <path d="M16.5 6v11.5a4 4 0 0 1-8 0V5a2.5 2.5 0 0 1 5 0v10.5a1 1 0 0 1-2 0V6H10v9.5a2.5 2.5 0 0 0 5 0V5a4 4 0 0 0-8 0v12.5a5.5 5.5 0 0 0 11 0V6z" />
            </svg>
          </button>
          <label class="visually-hidden" for="svc-body">
            {t('write')}
          </label>
          <textarea
            id="svc-body"
            ref={area}
            rows={2}
            value={body}
            placeholder={t('write')}
            title={t('format_hint')}
            onInput={(e) => typed(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey) void send(e);
            }}
          />
          <button type="submit" class="btn send" disabled={busy || (!body.trim() && !files.length)} aria-label={t('send')} title={`${t('send')} (Enter)`}>
            <svg viewBox="0 0 24 24" aria-hidden="true">
              <path d="M3 20.5 21 12 3 3.5V10l12 2-12 2z" />
            </svg>
          </button>
        </form>
      )}
    </section>
  );
}
