// Merge and split in the panel (issue 33): the conversation's "Merge…" control (shortcut m) with a
// search for the target by subject or contact, the possible-duplicate hint, the banner of a merged
// stub with its undo, the undo toast after a merge, and "Split" on a message.
import { signal } from '@preact/signals';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, type Conversation, type ConversationListItem, errorText, type Message, must } from '../api';
import { Dialog } from '../components/Dialog';
import { absoluteTime, conversationTitle, relativeTime, t } from '../i18n';
import { CommandPalette } from '../palette';
import { toast } from '../state';
import './merge.css';

const conversationUrl = (id: string) => `/conversations/${id}`;

/** The merge just made, offered for undo in a toast while it is shown. */
const lastMerge = signal<{ sourceId: string; text: string; id: number } | null>(null);

/** The conversation whose merge dialog another place asked to open (the command palette). */
export const mergeAsked = signal<string | null>(null);
let mergeCount = 0;

async function merge(sourceId: string, target: { id: string; subject: string | null; source: Conversation['source'] }, go: (url: string) => void) {
  try {
    await must(api.POST('/v1/conversations/{conversationId}/merge', { params: { path: { conversationId: sourceId } }, body: { into_id: target.id } }));
    const id = ++mergeCount;
    lastMerge.value = { sourceId, text: t('merge.done', { subject: conversationTitle(target) }), id };
    // The toast goes after 15 s, but not from under someone who moved into it (WCAG 2.2.1).
    const expire = () => {
      if (lastMerge.value?.id !== id) return;
      if (document.querySelector('.merge-toast')?.contains(document.activeElement)) setTimeout(expire, 5_000);
      else lastMerge.value = null;
    };
    setTimeout(expire, 15_000);
    go(conversationUrl(target.id));
  } catch (e) {
    toast(t('action.failed', { error: errorText(e) }));
  }
}

async function unmerge(sourceId: string, go: (url: string) => void) {
  try {
    await must(api.POST('/v1/conversations/{conversationId}/unmerge', { params: { path: { conversationId: sourceId } } }));
    lastMerge.value = null;
    toast(t('merge.undone'));
    go(conversationUrl(sourceId));
  } catch (e) {
    toast(t('action.failed', { error: errorText(e) }));
  }
}

/** The undo toast of the latest merge (bottom-left, like the composer's undo). */
export function MergeUndoToast() {
  const { route } = useLocation();
  const last = lastMerge.value;
  if (!last) return null;
  return (
    <div class="merge-toast" role="status">
      <span>{last.text}</span>
      <button class="btn" type="button" onClick={() => void unmerge(last.sourceId, route)}>
        {t('merge.undo')}
      </button>
    </div>
  );
}

export function MergeButton(props: { conversation: Conversation; open: boolean; onOpen: (open: boolean) => void }) {
  if (props.conversation.merged_into_id) return null;
  return (
    <>
      <button class="btn" type="button" aria-haspopup="dialog" onClick={() => props.onOpen(true)} title={`${t('merge.button')} (m)`}>
        {t('merge.button')}
      </button>
      {props.open && <MergeDialog conversation={props.conversation} onClose={() => props.onOpen(false)} />}
    </>
  );
}

function MergeDialog(props: { conversation: Conversation; onClose: () => void }) {
  const { route } = useLocation();
  const [q, setQ] = useState('');
  const [found, setFound] = useState<ConversationListItem[] | null>(null);
  const asked = useRef(0);
  useEffect(() => {
    const n = ++asked.current;
    const timer = setTimeout(async () => {
      const r = await api.GET('/v1/conversations/{conversationId}/merge-targets', {
        params: { path: { conversationId: props.conversation.id }, query: q.trim() ? { q: q.trim() } : {} },
      });
      if (n === asked.current) setFound(r.data?.data ?? []);
    }, 200);
    return () => clearTimeout(timer);
  }, [q]);
  return (
    <Dialog title={t('merge.title')} onClose={props.onClose}>
      <p class="muted">{t('merge.hint')}</p>
      <label for="merge-search">{t('merge.search')}</label>
      <input id="merge-search" class="input" type="search" value={q} data-autofocus onInput={(e) => setQ(e.currentTarget.value)} />
      {found === null ? (
        <p class="muted">{t('merge.searching')}</p>
      ) : found.length === 0 ? (
        <p class="muted">{t('merge.none')}</p>
      ) : (
        <ul class="merge-targets" role="list">
          {found.map((c) => (
            <li key={c.id}>
              <button
                class="btn merge-target"
                type="button"
                title={t('merge.into')}
                onClick={() => {
                  props.onClose();
                  void merge(props.conversation.id, c, route);
                }}
              >
                <strong>{conversationTitle(c)}</strong>
                <span class="muted">
                  {c.contact.name ?? c.contact.email ?? ''} · {t(`status.${c.status}`)} ·{' '}
                  <time dateTime={c.last_message_at}>{relativeTime(c.last_message_at)}</time>
                </span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </Dialog>
  );
}

/** A merged stub: where it went, and undo while the merge can still be undone. */
export function MergedBanner(props: { conversation: Conversation }) {
  const { route } = useLocation();
  const [undoUntil, setUndoUntil] = useState<string | null>(null);
  const into = props.conversation.merged_into_id;
  useEffect(() => {
    if (!into) return;
    void api
      .GET('/v1/conversations/{conversationId}/merge', { params: { path: { conversationId: props.conversation.id } } })
      .then((r) => setUndoUntil(r.data?.undo_until ?? null));
  }, [props.conversation.id, into]);
  if (!into) return null;
  return (
    <div class="banner merge-banner" role="status">
      <span>{t('merge.stub')}</span>
      <a href={conversationUrl(into)}>{t('merge.open_target')}</a>
      {undoUntil && (
        <button class="btn" type="button" onClick={() => void unmerge(props.conversation.id, route)}>
          {t('merge.undo_until', { time: absoluteTime(undoUntil) })}
        </button>
      )}
    </div>
  );
}

/** "Possible duplicate": shown, never applied by itself. */
export function DuplicateHint(props: { conversation: Conversation }) {
  const { route } = useLocation();
  const [dup, setDup] = useState<ConversationListItem | null>(null);
  const [dismissed, setDismissed] = useState(false);
  useEffect(() => {
    setDup(null);
    if (props.conversation.merged_into_id) return;
    void api
      .GET('/v1/conversations/{conversationId}/duplicates', { params: { path: { conversationId: props.conversation.id } } })
      .then((r) => setDup(r.data?.data[0] ?? null));
  }, [props.conversation.id, props.conversation.merged_into_id]);
  if (!dup || dismissed) return null;
  return (
    <div class="banner merge-duplicate" role="note">
      <span>{t('merge.duplicate', { subject: conversationTitle(dup), when: relativeTime(dup.last_message_at) })}</span>
      <button class="btn" type="button" onClick={() => void merge(props.conversation.id, dup, route)}>
        {t('merge.duplicate_merge')}
      </button>
      <button class="btn btn-ghost" type="button" onClick={() => setDismissed(true)}>
        {t('merge.dismiss')}
      </button>
    </div>
  );
}

/** "Split" on a message: it and the later messages of its thread go into a new conversation. */
export function SplitButton(props: { message: Message }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button class="btn btn-ghost msg-action" type="button" aria-haspopup="dialog" onClick={() => setOpen(true)}>
        {t('merge.split')}
      </button>
      {open && <SplitDialog message={props.message} onClose={() => setOpen(false)} />}
    </>
  );
}

/** The conversation whose "Split from this message…" the command palette asked for. */
export const splitAsked = signal<string | null>(null);

/** "Split from this message…" (command palette): choose the message in a picker, then confirm as from its Split button. */
export function SplitPicker(props: { messages: Message[]; authorOf: (m: Message) => string; onClose: () => void }) {
  const [chosen, setChosen] = useState<Message | null>(null);
  const chosenRef = useRef<Message | null>(null);
  if (chosen) return <SplitDialog message={chosen} onClose={props.onClose} />;
  const commands = props.messages
    .filter((m) => m.kind === 'message' && m.status !== 'scheduled')
    .map((m) => ({
      id: m.id,
      label: `${props.authorOf(m)} · ${absoluteTime(m.created_at)} — ${m.body.replace(/\s+/g, ' ').trim().slice(0, 80)}`,
      run: () => {
        chosenRef.current = m;
        setChosen(m);
      },
    }));
  return (
    <CommandPalette
      title={t('merge.split_pick_title')}
      placeholder={t('merge.split_pick_filter')}
      empty={t('merge.split_pick_empty')}
      commands={commands}
      // The palette closes itself before it runs the choice: the confirmation then takes its place.
      onClose={() => queueMicrotask(() => chosenRef.current || props.onClose())}
    />
  );
}

function SplitDialog(props: { message: Message; onClose: () => void }) {
  const { route } = useLocation();
  const m = props.message;
  return (
    <Dialog title={t('merge.split_title')} onClose={props.onClose} closeButton={false}>
      <p>{t('merge.split_text')}</p>
      <p class="merge-actions">
        <button
          class="btn btn-primary"
          type="button"
          data-autofocus
          onClick={async () => {
            props.onClose();
            try {
              const r = await must(
                api.POST('/v1/conversations/{conversationId}/split', {
                  params: { path: { conversationId: m.conversation_id } },
                  body: { message_id: m.id },
                }),
              );
              toast(t('merge.split_done'));
              route(conversationUrl(r.conversation.id));
            } catch (e) {
              toast(t('action.failed', { error: errorText(e) }));
            }
          }}
        >
          {t('merge.split_confirm')}
        </button>
        <button class="btn" type="button" onClick={props.onClose}>
          {t('merge.cancel')}
        </button>
      </p>
    </Dialog>
  );
}

/** The timeline line of a merge, undo or split (details.changes of its event). */
export function mergeEventText(field: string, change: { from: unknown; to: unknown }): string | null {
  if (field === 'merged_into_id') return change.to ? t('merge.event_into') : t('merge.event_unmerged_into');
  if (field === 'merged_from') return change.to ? t('merge.event_from') : t('merge.event_unmerged_from');
  if (field === 'split_into') return t('merge.event_split_into');
  if (field === 'split_from') return t('merge.event_split_from');
  return null;
}
