// The panel's live connection: /v1/realtime for the current workspace, resumed by position after a
// drop, with a visible reconnecting state. Listeners get each event once, in order.
import { connection } from './state';

export interface StreamEvent {
  seq: number;
  id: string;
  type: string;
  timestamp: string;
  workspace_id: string;
  inbox_id?: string;
  data: Record<string, any>;
}

/**
 * Typing and viewing signals name their conversation by id and inbox only: they must never be merged
 * into a conversation shown (a view still loading would get a conversation without its fields).
 */
export function isSignal(event: StreamEvent): boolean {
  return event.type === 'typing' || event.type === 'viewing';
}

type Listener = (event: StreamEvent) => void;
const listeners = new Set<Listener>();
const resetListeners = new Set<() => void>();

export function onEvent(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
/** Called when events were missed beyond what the server keeps: refetch everything shown. */
export function onReset(listener: () => void): () => void {
  resetListeners.add(listener);
  return () => resetListeners.delete(listener);
}

let socket: WebSocket | null = null;
let cursor: number | null = null;
let workspace: string | null = null;
let retry = 0;
let timer: ReturnType<typeof setTimeout> | undefined;

export function connectRealtime(workspaceId: string) {
  if (workspace === workspaceId && socket) return;
  disconnectRealtime();
  workspace = workspaceId;
  cursor = null;
  open();
}

export function disconnectRealtime() {
  workspace = null;
  clearTimeout(timer);
  const s = socket;
  socket = null;
  s?.close(1000);
}

function open() {
  if (!workspace) return;
  const url = new URL('/v1/realtime', location.href);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.searchParams.set('workspace', workspace);
  if (cursor !== null) url.searchParams.set('after', String(cursor));
  const s = new WebSocket(url);
  socket = s;
  s.onmessage = (m) => {
    let frame: any;
    try {
      frame = JSON.parse(String(m.data));
    } catch {
      return;
    }
    if (frame.type === 'hello' && cursor === null) cursor = Number(frame.cursor);
    if (frame.type === 'live') {
      retry = 0;
      connection.value = 'live';
    }
    if (frame.type === 'event' && frame.event) {
      cursor = frame.event.seq;
      for (const l of listeners) l(frame.event as StreamEvent);
    }
    if (frame.type === 'cursor_expired') {
      cursor = null;
      for (const l of resetListeners) l();
    }
  };
  s.onclose = (e) => {
    if (socket !== s) return;
    socket = null;
    if (e.code === 4401) {
      location.assign('/sign-in');
      return;
    }
    connection.value = 'reconnecting';
    const delay = Math.min(10_000, 500 * 2 ** retry++) * (0.8 + Math.random() * 0.4);
    timer = setTimeout(open, delay);
  };
}
