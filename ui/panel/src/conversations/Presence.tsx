// Collision warnings: who else has this conversation open or is writing a reply in it, so two people
// don't answer the same customer. While the conversation is open and the tab visible, the panel
// announces the member (POST …/viewing, repeated every VIEWING_EVERY_MS) and says when they leave
// (DELETE …/viewing: closing the conversation, hiding the tab, leaving the page). Others' `viewing`
// and `typing` events arrive on the realtime stream; each counts until its `until`.
import { useEffect, useState } from 'preact/hooks';
import { api, type Message } from '../api';
import { t } from '../i18n';
import { onEvent } from '../realtime';
import { me, memberName } from '../state';

/** The server keeps a signal VIEWING_SHOWN_MS (50 s); repeating every 20 s leaves room for one late one. */
const VIEWING_EVERY_MS = 20_000;

export interface Presence {
  /** Other members with the conversation open, by person id. */
  viewing: { id: string; name: string }[];
  /** Other members writing a reply now. */
  typing: { id: string; name: string }[];
  /** Who else replied to the customer since this member opened the conversation (or last sent anyway). */
  repliedBy: string | null;
  /** The member has seen the warning about `repliedBy` and sends anyway. */
  acknowledge(): void;
}

type Seen = Map<string, { name: string; until: number }>;

function live(seen: Seen, now: number) {
  return [...seen].filter(([, v]) => v.until > now).map(([id, v]) => ({ id, name: v.name }));
}

export function usePresence(conversationId: string): Presence {
  const [viewers, setViewers] = useState<Seen>(new Map());
  const [typists, setTypists] = useState<Seen>(new Map());
  const [repliedBy, setRepliedBy] = useState<string | null>(null);
  const [now, setNow] = useState(Date.now());
  const myId = me.value!.person.id;
  const update = (set: typeof setViewers, id: string, name: string, until: number) =>
    set((old) => {
      const next = new Map(old);
      if (until > Date.now()) next.set(id, { name, until });
      else next.delete(id);
      return next;
    });
  const nameOf = (who: { member_id?: string; name?: string | null } | undefined) =>
    who?.name || memberName(who?.member_id, t('conv.you'), t('presence.someone'));

  // Announce this member while the conversation is open and visible.
  useEffect(() => {
    const path = { params: { path: { conversationId } } };
    let timer: ReturnType<typeof setInterval> | undefined;
    let announced = false;
    const announce = async () => {
      announced = true;
      // The answer names who was already here (their signals came before this view was open).
      const r = await api.POST('/v1/conversations/{conversationId}/viewing', path);
      for (const v of r.data?.viewers ?? []) update(setViewers, v.member_id, nameOf(v), Date.parse(v.until));
    };
    const leave = () => {
      clearInterval(timer);
      timer = undefined;
      if (!announced) return;
      announced = false;
      // keepalive: the request outlives a page that is being closed.
      void api.DELETE('/v1/conversations/{conversationId}/viewing', { ...path, keepalive: true }).catch(() => {});
    };
    const start = () => {
      if (document.visibilityState !== 'visible' || timer) return;
      void announce();
      timer = setInterval(() => void announce(), VIEWING_EVERY_MS);
    };
    const onVisibility = () => (document.visibilityState === 'visible' ? start() : leave());
    start();
    document.addEventListener('visibilitychange', onVisibility);
    addEventListener('pagehide', leave);
    return () => {
      document.removeEventListener('visibilitychange', onVisibility);
      removeEventListener('pagehide', leave);
      leave();
    };
  }, [conversationId]);

  // Others' signals and replies from the realtime stream.
  useEffect(() => {
    setViewers(new Map());
    setTypists(new Map());
    setRepliedBy(null);
    const off = onEvent((ev) => {
      if (ev.data.conversation?.id !== conversationId) return;
      if (ev.type === 'viewing') {
        const v = ev.data.viewer as { member_id: string; name: string | null };
        if (v.member_id !== myId) update(setViewers, v.member_id, nameOf(v), ev.data.left ? 0 : Date.parse(ev.data.until));
      } else if (ev.type === 'typing' && ev.data.author?.type === 'member') {
        const a = ev.data.author as { member_id: string; name: string | null };
        if (a.member_id !== myId) update(setTypists, a.member_id, nameOf(a), Date.parse(ev.data.until));
      } else if (ev.type === 'message.created') {
        const m = ev.data.message as Message;
        if (m.kind !== 'message' || m.direction !== 'out') return;
        if (m.author.type === 'member' && m.author.member_id !== myId) {
          setRepliedBy(nameOf({ member_id: m.author.member_id ?? undefined }));
          update(setTypists, m.author.member_id!, '', 0);
        } else if (m.author.type === 'api_key') setRepliedBy(t('conv.api'));
      }
    });
    return off;
  }, [conversationId]);

  // Signals run out without another event: look again every second while any is shown.
  const anyShown = viewers.size > 0 || typists.size > 0;
  useEffect(() => {
    if (!anyShown) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [anyShown]);

  return { viewing: live(viewers, now), typing: live(typists, now), repliedBy, acknowledge: () => setRepliedBy(null) };
}

/** The line under the conversation's title: "Ayşe is typing a reply…", "Ayşe is viewing". */
export function PresenceLine(props: { presence: Presence }) {
  const { viewing, typing } = props.presence;
  const typingIds = new Set(typing.map((x) => x.id));
  const onlyViewing = viewing.filter((x) => !typingIds.has(x.id));
  const parts: string[] = [];
  if (typing.length) parts.push(t('presence.typing', { name: joinNames(typing.map((x) => x.name)) }));
  if (onlyViewing.length)
    parts.push(t(onlyViewing.length === 1 ? 'presence.viewing' : 'presence.viewing_many', { name: joinNames(onlyViewing.map((x) => x.name)) }));
  return (
    <p class={`presence-line${parts.length ? '' : ' empty'}`} role="status">
      {parts.length > 0 && <span class={`presence-dot${typing.length ? ' typing' : ''}`} aria-hidden="true" />}
      {parts.join(' · ')}
    </p>
  );
}

export function joinNames(names: string[]): string {
  return new Intl.ListFormat(document.documentElement.lang || 'en', { style: 'long', type: 'conjunction' }).format(names);
}
