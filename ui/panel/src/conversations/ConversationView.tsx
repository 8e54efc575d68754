// One conversation: its thread, the composer and the details column.
import { useEffect, useRef, useState } from 'preact/hooks';
import { MessageText } from '../../../shared/rich';
import type { ConversationVisit } from '../analytics';
import { api, type Conversation, errorText, type Message, must, type Schemas } from '../api';
import { MacroMenu } from '../automation';
import { closeRefused, isCloseRefusal, missingRequired } from '../custom-fields';
import { absoluteTime, clockTime, conversationTitle, t } from '../i18n';
import { DuplicateHint, MergeButton, MergedBanner, mergeAsked, SplitButton, SplitPicker, splitAsked } from '../merge';
import { isSignal, onEvent, onReset } from '../realtime';
import { SlaClock } from '../sla';
import { SnoozeBadge, SnoozeButton, type SnoozeValue } from '../snooze';
import { me, memberName, toast } from '../state';
import { Composer, type ComposerHandle } from './Composer';
import { ContactTyping } from './ContactTyping';
import { composeAsked, ForwardDialog, type ForwardDraft, ForwardedLine, linesOf } from './compose';
import { type Contact, type ConversationPatch, Details } from './Details';
import { describeEvent } from './event-line';
import { Attachments, MailFrame, TextBody } from './MessageBody';
import { PresenceLine, usePresence } from './Presence';
import { AddParticipant, keepBcc, MessageRecipients } from './Recipients';
import { ScheduledLine } from './SendLater';
import { isTyping } from './typing';

export function ConversationPane(props: { conversationId: string | null; onBack: () => void }) {
  if (!props.conversationId) {
    return (
      <section class="conv-pane details-hidden" aria-label={t('conv.none_title')}>
        <div class="empty" style={{ alignSelf: 'center' }}>
          <strong>{t('conv.none_title')}</strong>
          {t('conv.none')}
        </div>
      </section>
    );
  }
  return <ConversationView id={props.conversationId} onBack={props.onBack} />;
}

function ConversationView(props: { id: string; onBack: () => void }) {
  const [conv, setConv] = useState<Conversation | null>(null);
  const [messages, setMessages] = useState<Message[]>([]);
  const [contact, setContact] = useState<Contact | null>(null);
  const [visit, setVisit] = useState<ConversationVisit | null>(null);
  const [state, setState] = useState<'loading' | 'ready' | 'error'>('loading');
  const [error, setError] = useState('');
  const [snoozing, setSnoozing] = useState(false);
  const [forwarding, setForwarding] = useState<Message | null>(null);
  // A forward whose send was undone: its dialog opens again as it was.
  const [forwardDraft, setForwardDraft] = useState<ForwardDraft | undefined>(undefined);
  const [merging, setMerging] = useState(false);
  const [splitting, setSplitting] = useState(false);
  // "Split from this message…" from the command palette.
  useEffect(() => {
    if (splitAsked.value !== conv?.id) return;
    splitAsked.value = null;
    if (!conv.merged_into_id) setSplitting(true);
  }, [splitAsked.value, conv?.id]);
  // "Merge…" from the command palette opens this conversation's merge dialog.
  useEffect(() => {
    if (mergeAsked.value !== conv?.id) return;
    mergeAsked.value = null;
    if (!conv.merged_into_id) setMerging(true);
  }, [mergeAsked.value, conv?.id]);
  const [showDetails, setShowDetails] = useState(() => matchMedia('(min-width: 900px)').matches);
  const detailsToggle = useRef<HTMLButtonElement>(null);
  const thread = useRef<HTMLDivElement>(null);
  const composer = useRef<ComposerHandle>(null);
  const myId = me.value!.person.id;
  const presence = usePresence(props.id);

  async function load() {
    setState('loading');
    try {
      const [c, page] = await Promise.all([
        must(api.GET('/v1/conversations/{conversationId}', { params: { path: { conversationId: props.id } } })),
        must(api.GET('/v1/conversations/{conversationId}/messages', { params: { path: { conversationId: props.id }, query: { order: 'desc', limit: 200 } } })),
      ]);
      const { visit: cameFrom, ...rest } = c;
      setConv(rest);
      setVisit(cameFrom);
      const fetched = page.data.slice().reverse();
      // A line that came live while the thread was on its way is newer than it: kept, not replaced.
      setMessages((old) => {
        const known = new Set(fetched.map((m) => m.id));
        const live = old.filter((m) => m.conversation_id === props.id && !known.has(m.id));
        return live.length ? [...fetched, ...live] : fetched;
      });
      setState('ready');
      void api.POST('/v1/conversations/{conversationId}/read', { params: { path: { conversationId: props.id } } });
      const ct = await api.GET('/v1/contacts/{contactId}', { params: { path: { contactId: c.contact_id } } });
      if (ct.data) setContact(ct.data);
    } catch (e) {
      setError(errorText(e));
      setState('error');
    }
  }

  /** Adds the thread's newest lines not shown yet: a change's event line comes with no message in its event. */
  async function loadNewest() {
    const page = await api.GET('/v1/conversations/{conversationId}/messages', {
      params: { path: { conversationId: props.id }, query: { order: 'desc', limit: 20 } },
    });
    if (!page.data) return;
    const newest = page.data.data;
    setMessages((old) => {
      const known = new Set(old.map((x) => x.id));
      const added = newest.filter((x) => !known.has(x.id)).reverse();
      return added.length ? [...old, ...added].sort((a, b) => a.created_at.localeCompare(b.created_at)) : old;
    });
  }

  useEffect(() => {
    void load();
    const off = onEvent((ev) => {
      const c = ev.data.conversation;
      if (!c || c.id !== props.id || isSignal(ev)) return;
      setConv((old) => ({ ...(old ?? {}), ...c }));
      if (ev.type === 'conversation.updated') void loadNewest();
      const m = ev.data.message as Message | undefined;
      if (m) {
        setMessages((old) => (old.some((x) => x.id === m.id) ? old.map((x) => (x.id === m.id ? keepBcc(x, m) : x)) : [...old, m]));
        if (m.direction === 'in') void api.POST('/v1/conversations/{conversationId}/read', { params: { path: { conversationId: props.id } } });
      }
    });
    const offReset = onReset(() => void load());
    return () => {
      off();
      offReset();
    };
  }, [props.id]);

  useEffect(() => {
    const el = thread.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [messages.length, state]);

  async function snooze(value: SnoozeValue) {
    if (!conv) return;
    try {
      setConv(await must(api.PATCH('/v1/conversations/{conversationId}', { params: { path: { conversationId: props.id } }, body: { snoozed_until: value } })));
    } catch (e) {
      toast(t('action.failed', { error: errorText(e) }));
    }
  }

  async function change(patch: ConversationPatch) {
    if (!conv) return;
    const before = conv;
    setConv({ ...conv, ...patch } as Conversation);
    try {
      setConv(await must(api.PATCH('/v1/conversations/{conversationId}', { params: { path: { conversationId: props.id } }, body: patch })));
    } catch (e) {
      setConv(before);
      if (!isCloseRefusal(e)) return toast(t('action.failed', { error: errorText(e) }));
      // Closing waits for required custom fields: the details show and mark them.
      closeRefused.value = props.id;
      setShowDetails(true);
      toast(t('cf.close_refused', { fields: missingRequired(before.custom_fields).join(', ') || errorText(e) }));
    }
  }

  async function saveFields(values: Record<string, unknown>) {
    setConv(await must(api.PATCH('/v1/conversations/{conversationId}', { params: { path: { conversationId: props.id } }, body: { custom_fields: values } })));
  }

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || isTyping(e.target) || !conv) return;
      if (e.key === 'e') void change({ status: conv.status === 'closed' ? 'open' : 'closed' });
      else if (e.key === 'z') setSnoozing(true);
      else if (e.key === 'm' && !conv.merged_into_id) setMerging(true);
      else if (e.key === 'a') void change({ assignee_id: myId });
      else if (e.key === 'r') composer.current?.focus('message');
      else if (e.key === 'n') composer.current?.focus('note');
      else if (e.key === 'f' && !document.querySelector('[role="dialog"]')) {
        // The newest message (not a note or an event) of the thread.
        const newest = [...messages].reverse().find((m) => m.kind === 'message');
        if (!newest) return;
        setForwarding(newest);
      } else return;
      e.preventDefault();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [conv, messages]);

  if (state === 'loading' && !conv) {
    return (
      <section class="conv-pane details-hidden" aria-busy="true" aria-label={t('conv.loading')}>
        <div style={{ padding: 'var(--space-4)' }}>
          <div class="skeleton" style={{ width: '50%' }} />
          <div class="skeleton" style={{ width: '90%', height: '60px' }} />
          <div class="skeleton" style={{ width: '70%', height: '60px' }} />
        </div>
      </section>
    );
  }
  if (state === 'error' || !conv) {
    return (
      <section class="conv-pane details-hidden">
        <div class="empty" role="alert">
          <strong>{t('conv.error')}</strong>
          <p>{error}</p>
          <button class="btn" type="button" onClick={() => void load()}>
            {t('list.retry')}
          </button>
        </div>
      </section>
    );
  }

  return (
    <section class={`conv-pane${showDetails ? ' details-open' : ' details-hidden'}`} aria-label={conversationTitle(conv)}>
      <div class="conv-main">
        <div class="pane-head">
          <button class="btn btn-ghost back" type="button" onClick={props.onBack}>
            ← {t('conv.back')}
          </button>
          <h2 title={conv.subject ?? ''}>{conversationTitle(conv)}</h2>
          {conv.imported && <span class="badge">{t('conv.imported')}</span>}
          <SnoozeBadge snoozedUntil={conv.snoozed_until} />
          {conv.status !== 'closed' && <SlaClock sla={conv.sla} />}
          <SnoozeButton snoozedUntil={conv.snoozed_until} open={snoozing} onOpen={setSnoozing} onSnooze={(v) => void snooze(v)} />
          <MergeButton conversation={conv} open={merging} onOpen={setMerging} />
          <MacroMenu conversationId={conv.id} />
          <button
            class="btn"
            type="button"
            onClick={() => void change({ status: conv.status === 'closed' ? 'open' : 'closed' })}
            title={`${conv.status === 'closed' ? t('action.reopen_conversation') : t('action.close_conversation')} (e)`}
          >
            {conv.status === 'closed' ? t('action.reopen_conversation') : t('action.close_conversation')}
          </button>
          <button ref={detailsToggle} class="btn btn-ghost" type="button" aria-expanded={showDetails} onClick={() => setShowDetails(!showDetails)}>
            {showDetails ? t('conv.hide_details') : t('conv.details')}
          </button>
        </div>
        <PresenceLine presence={presence} />
        <MergedBanner conversation={conv} />
        <DuplicateHint conversation={conv} />
        <div class="thread" ref={thread} role="log" aria-live="polite" aria-label={conversationTitle(conv)}>
          {messages.map((m) => (
            <MessageItem
              key={m.id}
              message={m}
              contact={contact}
              myId={myId}
              canSplit={!conv.merged_into_id}
              onUpdated={(u) => setMessages((old) => old.map((x) => (x.id === u.id ? u : x)))}
              onCancelled={(html, back) => {
                setMessages((old) => old.filter((x) => x.id !== m.id));
                // The first message of a conversation the team started: the conversation went with it,
                // so the text goes back into a New conversation dialog.
                if (back.conversation_removed) {
                  const files = m.attachments.filter((a) => back.attachment_ids.includes(a.id));
                  composeAsked.value = { inboxId: conv.inbox_id, lines: linesOf(back), subject: conv.subject ?? '', body: back.body, files, removed: conv.id };
                } else composer.current?.restore(html);
              }}
              onConversation={setConv}
              onForward={() => setForwarding(m)}
            />
          ))}
        </div>
        <ContactTyping conversationId={conv.id} contactName={contact?.name ?? null} />
        {!conv.merged_into_id && (
          <Composer
            ref={composer}
            conversationId={conv.id}
            presence={presence}
            onUndone={(id) => setMessages((old) => old.filter((x) => x.id !== id))}
            onSent={(m) => setMessages((old) => (old.some((x) => x.id === m.id) ? old.map((x) => (x.id === m.id ? keepBcc(m, x) : x)) : [...old, m]))}
          />
        )}
      </div>
      {forwarding && (
        <ForwardDialog
          message={forwarding}
          subject={conv.subject}
          initial={forwardDraft}
          onClose={() => {
            setForwarding(null);
            setForwardDraft(undefined);
          }}
          onUndone={(id, draft, original) => {
            setMessages((old) => old.filter((x) => x.id !== id));
            setForwardDraft(draft);
            setForwarding(original);
          }}
          onSent={(m) => setMessages((old) => (old.some((x) => x.id === m.id) ? old.map((x) => (x.id === m.id ? keepBcc(m, x) : x)) : [...old, m]))}
        />
      )}
      {splitting && (
        <SplitPicker
          messages={messages}
          authorOf={(x) =>
            x.direction === 'in'
              ? x.email?.from?.name || x.email?.from?.address || contact?.name || t('list.unknown_contact')
              : x.author.type === 'member'
                ? memberName(x.author.member_id, t('conv.you'), t('conv.team'))
                : t('conv.api')
          }
          onClose={() => setSplitting(false)}
        />
      )}
      {showDetails && (
        <Details
          conversation={conv}
          contact={contact}
          visit={visit}
          onChange={change}
          onCustomFields={saveFields}
          onContactFields={async (values) => {
            if (contact)
              setContact(await must(api.PATCH('/v1/contacts/{contactId}', { params: { path: { contactId: contact.id } }, body: { custom_fields: values } })));
          }}
          onContactChanged={(c) => setContact(c)}
          onClose={() => {
            setShowDetails(false);
            requestAnimationFrame(() => detailsToggle.current?.focus());
          }}
        />
      )}
    </section>
  );
}

function MessageItem(props: {
  message: Message;
  contact: Contact | null;
  myId: string;
  canSplit: boolean;
  onUpdated: (m: Message) => void;
  onCancelled: (html: string, back: Schemas['CancelledMessage']) => void;
  onConversation: (c: Conversation) => void;
  onForward: () => void;
}) {
  const m = props.message;
  const [formatted, setFormatted] = useState(false);
  const [remoteImages, setRemoteImages] = useState(false);
  if (m.kind === 'event' && (m.details as { type?: string } | null)?.type === 'imported_divider')
    return <div class="divider">{t('conv.imported_divider')}</div>;
  if (m.kind === 'event')
    return (
      <p class="event-line">
        {describeEvent(m).join(' · ')} · <time dateTime={m.created_at}>{absoluteTime(m.created_at)}</time>
      </p>
    );
  // Mail from someone else who joined the thread (by In-Reply-To/References) is shown as its real
  // sender, never under the contact's name; replies still go to the contact.
  const from = m.email?.from ?? null;
  const contact = props.contact;
  const otherSender =
    m.author.type === 'contact' &&
    contact !== null &&
    from !== null &&
    m.author.contact_id !== contact.id &&
    !contact.emails.includes(from.address.toLowerCase());
  const contactName = contact?.name ?? contact?.emails?.[0] ?? t('list.unknown_contact');
  const author =
    m.author.type === 'contact'
      ? otherSender
        ? from.name
          ? `${from.name} <${from.address}>`
          : from.address
        : contactName
      : m.author.type === 'member'
        ? memberName(m.author.member_id, t('conv.you'), t('conv.team'))
        : m.author.type === 'api_key'
          ? t('conv.api')
          : t('conv.system');
  const cls = m.kind === 'note' ? 'msg note' : m.direction === 'out' ? 'msg out' : 'msg';
  // A chat message's light formatting (the widget's subset) shows in place, rebuilt from a whitelist
  // as the widget does; mail html stays in its sandboxed frame on request.
  const chatFormatted = !!m.html && (m.email === null || m.email === undefined) && m.kind === 'message';
  // Inline parts (a newsletter's cid: banner) show inside the formatted mail, not again as files.
  const listed = formatted && m.html ? m.attachments.filter((a) => !(a.inline && a.content_id)) : m.attachments;
  return (
    <article class={cls} aria-label={`${m.kind === 'note' ? t('conv.note') + ': ' : ''}${author}`}>
      <header class="msg-head">
        <span class="author">{author}</span>
        {m.kind === 'note' && <span class="badge">{t('conv.note')}</span>}
        {m.automatic && <span class="badge">{t('conv.automatic')}</span>}
        {(m.details as { forward?: unknown } | null)?.forward ? <span class="badge">{t('compose.forwarded')}</span> : null}
        <time dateTime={m.created_at}>{absoluteTime(m.created_at)}</time>
        {otherSender && (
          <p class="sender-note">
            {t('conv.not_contact', { contact: contactName })} <AddParticipant conversationId={m.conversation_id} sender={from} onAdded={props.onConversation} />
          </p>
        )}
        {m.html && !chatFormatted && (
          <button class="btn btn-ghost" type="button" style={{ minHeight: '24px' }} onClick={() => setFormatted(!formatted)}>
            {formatted ? t('conv.show_text') : t('conv.show_formatted')}
          </button>
        )}
        {m.kind === 'message' && (
          <button
            class="btn btn-ghost msg-forward"
            type="button"
            style={{ minHeight: '24px' }}
            onClick={props.onForward}
            title={`${t('compose.forward_label')} (f)`}
          >
            {t('compose.forward')}
          </button>
        )}
        {props.canSplit && m.kind === 'message' && <SplitButton message={m} />}
      </header>
      <ForwardedLine message={m} />
      <MessageRecipients message={m} />
      {chatFormatted ? (
        <div class="msg-body msg-rich">
          <MessageText body={m.body ?? ''} html={m.html} />
        </div>
      ) : formatted && m.html ? (
        // Served with its own CSP: no scripts or forms, and no images from elsewhere until asked.
        <>
          <MailFrame
            src={`/v1/conversations/${m.conversation_id}/messages/${m.id}/html${remoteImages ? '?remote_images=true' : ''}`}
            title={t('conv.show_formatted')}
          />
          {!remoteImages && (
            <p class="msg-extra">
              <button class="btn btn-ghost" type="button" onClick={() => setRemoteImages(true)}>
                {t('conv.remote_images')}
              </button>
            </p>
          )}
        </>
      ) : (
        <TextBody body={m.body ?? ''} email={m.email !== null && m.email !== undefined} />
      )}
      <Attachments files={listed} />
      {m.has_original && (
        <p class="msg-extra">
          <a href={`/v1/conversations/${m.conversation_id}/messages/${m.id}/raw`} download>
            {t('conv.raw')}
          </a>
          {m.attachments_omitted > 0 && <span class="muted"> · {t('conv.omitted', { count: m.attachments_omitted })}</span>}
        </p>
      )}
      {m.status === 'failed' && (
        <p class="msg-status-failed" role="status">
          {t('conv.failed', { error: m.error ?? '' })}
          <RetryButton message={m} label={t('conv.retry')} onUpdated={props.onUpdated} />
        </p>
      )}
      {m.status === 'scheduled' && m.send_at && <ScheduledLine message={m} onCancelled={props.onCancelled} onUpdated={props.onUpdated} />}
      {(m.details as { held?: string } | null)?.held === 'customer_replied' && <p class="msg-status-pending">{t('conv.held')}</p>}
      {m.status === 'pending' &&
        (m.error ? (
          <p class="msg-status-pending" role="status">
            {m.retry_at ? t('conv.retrying_at', { time: clockTime(m.retry_at), error: m.error }) : t('conv.retrying', { error: m.error })}
            <RetryButton message={m} label={t('conv.retry_now')} onUpdated={props.onUpdated} />
          </p>
        ) : (
          <p class="msg-status-pending">{t('conv.pending')}</p>
        ))}
    </article>
  );
}

/** Sends a failed reply again, or tries a reply waiting for its next attempt now. */
function RetryButton(props: { message: Message; label: string; onUpdated: (m: Message) => void }) {
  const m = props.message;
  return (
    <button
      class="btn"
      type="button"
      onClick={async () => {
        try {
          props.onUpdated(
            await must(
              api.POST('/v1/conversations/{conversationId}/messages/{messageId}/retry', {
                params: { path: { conversationId: m.conversation_id, messageId: m.id } },
              }),
            ),
          );
        } catch (e) {
          toast(t('action.failed', { error: errorText(e) }));
        }
      }}
    >
      {props.label}
    </button>
  );
}
