// What the host page loads first: the launcher in an open shadow root, the `svc(…)` API and, for a
// visitor with a session, the socket that counts unread replies while the chat is closed. The chat
// panel (Preact) is imported when the visitor opens it.

import { startAnalytics } from './analytics';
import { type Identity, type VisitorMessage, WidgetClient, type WidgetConfig } from './client';
import { sheet, type Widget } from './host';
import { setLocale, t } from './i18n';
import launcherCss from './launcher.css?inline';

type Command = 'identify' | 'open' | 'close' | 'on' | 'track';
type Call = [Command, ...unknown[]];
interface Panel {
  show(): void;
  hide(): void;
}

const CHAT_ICON =
  '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H9l-5 4v-4H4a2 2 0 0 1-2-2V6a2 2 0 0 1 2-2z"/></svg>';
const CLOSE_ICON =
  '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M6.4 5 12 10.6 17.6 5 19 6.4 13.4 12l5.6 5.6-1.4 1.4-5.6-5.6L6.4 19 5 17.6 10.6 12 5 6.4z"/></svg>';

export async function start(script: HTMLScriptElement | null | undefined): Promise<void> {
  const src = script?.src;
  const publicKey = script?.dataset.key;
  if (!src || !publicKey) return console.warn('svc widget: the script tag needs data-key="svc_pk_…"');
  const client = new WidgetClient(new URL(src).origin, publicKey);

  let config: WidgetConfig;
  try {
    config = await client.config();
  } catch (e) {
    return console.warn(`svc widget: not shown (${(e as Error).message})`);
  }
  setLocale(config.inbox.locale);
  // The page's pageviews, when a property linked to this channel counts it (no /a.js needed).
  const track = config.analytics ? startAnalytics(new URL(src).origin, config.analytics.domain) : null;
  let chatOpened = false;

  const host = document.createElement('svc-chat');
  const root = host.attachShadow({ mode: 'open' });
  root.adoptedStyleSheets = [sheet(launcherCss)];
  const launcher = document.createElement('button');
  launcher.type = 'button';
  launcher.className = 'launcher';
  launcher.setAttribute('aria-expanded', 'false');
  const badge = document.createElement('span');
  badge.className = 'badge';
  badge.hidden = true;
  root.append(launcher);
  document.body.append(host);

  const baseTitle = document.title;
  const messageListeners = new Set<(m: VisitorMessage) => void>();
  let unread = 0;
  let opened = false;
  let panel: Panel | null = null;
  let loading: Promise<Panel> | null = null;

  function paint() {
    launcher.innerHTML = opened ? CLOSE_ICON : CHAT_ICON;
    launcher.setAttribute('aria-expanded', String(opened));
    const label = opened ? t('close_chat') : t('open_chat');
    launcher.setAttribute('aria-label', unread ? `${label} (${t('unread', { count: unread })})` : label);
    badge.textContent = String(unread);
    badge.hidden = !unread;
    launcher.append(badge);
    document.title = unread ? `${t('title_hint', { count: unread })} · ${baseTitle}` : baseTitle;
  }

  const widget: Widget = {
    client,
    config,
    root,
    launcher,
    close,
    emit(_type, message) {
      for (const l of messageListeners) l(message);
    },
  };

  async function open() {
    if (opened) return;
    opened = true;
    if (!chatOpened) {
      chatOpened = true;
      track?.('Chat Opened');
    }
    unread = 0;
    paint();
    loading ??= import('./app').then((m) => m.mountPanel(widget));
    panel = await loading;
    if (opened) panel.show();
  }
  function close() {
    if (!opened) return;
    opened = false;
    panel?.hide();
    paint();
    launcher.focus();
  }

  launcher.addEventListener('click', () => (opened ? close() : void open()));
  client.onFrame((f) => {
    if (f.type !== 'message') return;
    if (f.message.author.type === 'team') {
      widget.emit('message', f.message);
      if (!opened) {
        unread++;
        paint();
      }
    }
  });
  // Unread replies count while closed only for a visitor who already chats; others open no socket.
  client.connect();

  const api = async (command: Command, ...args: unknown[]) => {
    try {
      if (command === 'identify') {
        await client.identify(args[0] as Identity);
        client.connect();
      } else if (command === 'open') await open();
      else if (command === 'close') close();
      else if (command === 'track' && typeof args[0] === 'string') track?.(args[0], args[1] as Record<string, unknown> | undefined);
      else if (command === 'on' && args[0] === 'message' && typeof args[1] === 'function') messageListeners.add(args[1] as (m: VisitorMessage) => void);
    } catch (e) {
      console.warn(`svc widget: ${command} failed (${(e as Error).message})`);
    }
  };
  const w = window as unknown as { svc?: ((...a: unknown[]) => unknown) & { q?: Call[] } };
  const queued = w.svc?.q ?? [];
  w.svc = (...a: unknown[]) => api(...(a as Call));
  paint();
  for (const call of queued) await api(...call);
}
