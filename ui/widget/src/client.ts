// The widget's connection to svc: the typed /v1/widget client, the visitor session kept in the host
// site's localStorage (so a reload or another page of the site keeps the conversation), and the
// realtime socket with resume by position and a reconnecting state. Shared by the launcher (unread
// badge while closed) and the chat panel that loads on open.
import createClient from 'openapi-fetch';
import type { components, paths } from '../../generated/api';

export type WidgetConfig = paths['/v1/widget/config']['get']['responses'][200]['content']['application/json'];
export type VisitorMessage = components['schemas']['VisitorMessage'];
export type VisitorConversation = components['schemas']['VisitorConversation'];
export interface Identity {
  external_id?: string;
  identity_hash?: string;
  email?: string;
  name?: string;
}
interface StoredSession {
  token: string;
  expires_at: string;
  verified: boolean;
  /** The external id the session was proven for, if any. */
  external_id: string | null;
  conversation_id: string | null;
  cursor: number | null;
}
export type Frame =
  | { type: 'hello'; cursor: number }
  | { type: 'message'; seq: number; message: VisitorMessage }
  | { type: 'conversation'; seq: number; conversation: { id: string; status: string } }
  | { type: 'typing'; seq: number; conversation_id: string }
  | { type: 'resync'; cursor: number }
  | { type: 'closed' };
export type Link = 'idle' | 'live' | 'reconnecting';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class WidgetClient {
  readonly api;
  private readonly storageKey: string;
  private socket: WebSocket | null = null;
  private retry = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly frameListeners = new Set<(f: Frame) => void>();
  private readonly linkListeners = new Set<(l: Link) => void>();
  link: Link = 'idle';

  constructor(
    readonly origin: string,
    readonly publicKey: string,
  ) {
    this.api = createClient<paths>({ baseUrl: origin });
    this.storageKey = `svc.widget.${publicKey}`;
  }

  session(): StoredSession | null {
    try {
      const s = JSON.parse(localStorage.getItem(this.storageKey) ?? 'null') as StoredSession | null;
      return s && Date.parse(s.expires_at) > Date.now() ? s : null;
    } catch {
      return null;
    }
  }

  private save(s: StoredSession | null) {
    try {
      if (s) localStorage.setItem(this.storageKey, JSON.stringify(s));
      else localStorage.removeItem(this.storageKey);
    } catch {
      /* storage may be off: the chat then lasts as long as the page */
    }
  }

  remember(change: Partial<StoredSession>) {
    const s = this.session();
    if (s) this.save({ ...s, ...change });
  }

  private auth() {
    const s = this.session();
    if (!s) throw new ApiError(401, 'unauthorized', 'no visitor session');
    return { headers: { authorization: `Bearer ${s.token}` } };
  }

  /** The data of a call, or an ApiError; a refused token forgets the session. */
  private async must<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
    const { data, error, response } = await call;
    if (response.ok) return data as T;
    const body = (error ?? {}) as { error?: { code?: string; message?: string } };
    if (response.status === 401) this.forget();
    throw new ApiError(response.status, body.error?.code ?? 'error', body.error?.message ?? response.statusText);
  }

  config(): Promise<WidgetConfig> {
    return this.must(this.api.GET('/v1/widget/config', { params: { query: { public_key: this.publicKey } } }));
  }

  /** Opens a session with these details (an identified visitor replaces any other session). */
  async open(identity: Identity = {}): Promise<StoredSession> {
    const body: Identity & { public_key: string; page_url?: string } = { public_key: this.publicKey };
    for (const k of ['external_id', 'identity_hash', 'email', 'name'] as const) if (identity[k]) body[k] = identity[k];
    // The page the visitor chats from, for the team (without its fragment; only http(s) pages).
    const page = `${location.origin}${location.pathname}${location.search}`;
    if (/^https?:\/\//.test(page) && page.length <= 2000) body.page_url = page;
    const r = await this.must(this.api.POST('/v1/widget/sessions', { body }));
    this.disconnect();
    const s: StoredSession = {
      token: r.token,
      expires_at: r.expires_at,
      verified: r.verified,
      external_id: identity.external_id ?? null,
      conversation_id: null,
      cursor: null,
    };
    this.save(s);
    return s;
  }

  /** `svc('identify', …)`: a signed-in site user gets a proven session (and all of their conversations). */
  async identify(identity: Identity): Promise<void> {
    const s = this.session();
    if (identity.external_id ? s?.external_id === identity.external_id : s) return;
    await this.open(identity);
  }

  forget() {
    this.disconnect();
    this.save(null);
  }

  conversations() {
    return this.must(this.api.GET('/v1/widget/conversations', this.auth())).then((r) => r.data);
  }
  messages(conversationId: string, after?: string) {
    const query = after ? { limit: 200, after } : { limit: 200 };
    return this.must(this.api.GET('/v1/widget/conversations/{conversationId}/messages', { ...this.auth(), params: { path: { conversationId }, query } })).then(
      (r) => r.data,
    );
  }
  start(body: string) {
    return this.must(this.api.POST('/v1/widget/conversations', { ...this.auth(), body: { body } }));
  }
  post(conversationId: string, body: string, attachment_ids?: string[]) {
    return this.must(
      this.api.POST('/v1/widget/conversations/{conversationId}/messages', {
        ...this.auth(),
        params: { path: { conversationId } },
        body: { body, attachment_ids },
      }),
    );
  }
  typing(conversationId: string) {
    return this.must(this.api.POST('/v1/widget/conversations/{conversationId}/typing', { ...this.auth(), params: { path: { conversationId } } }));
  }

  onFrame(listener: (f: Frame) => void): () => void {
    this.frameListeners.add(listener);
    return () => this.frameListeners.delete(listener);
  }
  onLink(listener: (l: Link) => void): () => void {
    this.linkListeners.add(listener);
    return () => this.linkListeners.delete(listener);
  }
  private setLink(l: Link) {
    this.link = l;
    for (const f of this.linkListeners) f(l);
  }

  /** Opens the socket if there is a session and none is open; resumes after the last position seen. */
  connect() {
    const s = this.session();
    if (!s || this.socket) return;
    clearTimeout(this.timer);
    const url = new URL('/v1/widget/realtime', this.origin);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    url.searchParams.set('token', s.token);
    if (s.cursor !== null) url.searchParams.set('after', String(s.cursor));
    const socket = new WebSocket(url);
    this.socket = socket;
    socket.onmessage = (m) => {
      let frame: Frame;
      try {
        frame = JSON.parse(String(m.data)) as Frame;
      } catch {
        return;
      }
      if (frame.type === 'hello') {
        this.retry = 0;
        if (this.session()?.cursor === null) this.remember({ cursor: frame.cursor });
        this.setLink('live');
      } else if ('seq' in frame) this.remember({ cursor: frame.seq });
      else if (frame.type === 'resync') this.remember({ cursor: frame.cursor });
      for (const f of this.frameListeners) f(frame);
    };
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.setLink('reconnecting');
      // A refused upgrade looks like a network drop: ask the API whether the session still exists.
      this.conversations().then(
        () => this.schedule(),
        (e: unknown) => (e instanceof ApiError && e.status === 401 ? this.setLink('idle') : this.schedule()),
      );
    };
  }

  private schedule() {
    const delay = Math.min(10_000, 500 * 2 ** this.retry++) * (0.8 + Math.random() * 0.4);
    this.timer = setTimeout(() => this.connect(), delay);
  }

  disconnect() {
    clearTimeout(this.timer);
    const s = this.socket;
    this.socket = null;
    s?.close(1000);
    if (this.link !== 'idle') this.setLink('idle');
  }
}
