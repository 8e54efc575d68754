// Loopback fakes of the Zendesk and Help Scout REST APIs for migration tests: HTTP servers on
// 127.0.0.1 that answer in the providers' real JSON shapes (Zendesk: the cursor-based incremental
// ticket export with after_cursor / end_of_stream and sideloaded users, the comments endpoint,
// attachments by content_url, deleted tickets with status "deleted"; Help Scout: the OAuth token
// endpoint, _embedded lists with page / totalPages, threads typed customer / message / note with
// createdBy, the attachment data endpoint). Both record every request, can answer 429 with
// Retry-After on demand, and answer any method other than GET (and the token POST) with 405,
// recording it, so a test sees whether one was ever sent.
import http from 'node:http';

export interface FakeRequest {
  method: string;
  path: string;
  authorization: string | undefined;
}

abstract class FakeApi {
  readonly requests: FakeRequest[] = [];
  /** The next n requests (on paths matching `only`, if given) are answered 429 with Retry-After. */
  private throttle: { remaining: number; retryAfter: string; only?: RegExp } | null = null;
  private server: http.Server | undefined;
  url = '';
  /** Milliseconds every answer waits (a slow provider, to stop a reader in the middle). */
  delayMs = 0;

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
        const u = new URL(req.url ?? '/', 'http://127.0.0.1');
        this.requests.push({ method: req.method ?? '', path: u.pathname + u.search, authorization: req.headers.authorization });
        const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
          const text = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
          res.writeHead(status, { 'content-type': Buffer.isBuffer(body) ? 'application/octet-stream' : 'application/json', ...headers });
          res.end(text);
        };
        if (this.throttle && this.throttle.remaining > 0 && (!this.throttle.only || this.throttle.only.test(u.pathname))) {
          this.throttle.remaining--;
          send(429, { error: 'TooManyRequests', description: 'Rate limit exceeded' }, { 'retry-after': this.throttle.retryAfter });
          return;
        }
        try {
          this.handle(req.method ?? 'GET', u, req.headers, Buffer.concat(chunks).toString('utf8'), send);
        } catch (error) {
          send(500, { error: String(error) });
        }
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as { port: number }).port}`;
    return this;
  }

  throttleNext(n: number, retryAfter = '1', only?: RegExp): void {
    this.throttle = { remaining: n, retryAfter, only };
  }

  /** Requests other than GET (and Help Scout's token POST): a read-only source sends none. */
  writes(): FakeRequest[] {
    return this.requests.filter((r) => r.method !== 'GET' && !(r.method === 'POST' && r.path === '/v2/oauth2/token'));
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  protected abstract handle(
    method: string,
    u: URL,
    headers: http.IncomingHttpHeaders,
    body: string,
    send: (status: number, body: unknown, headers?: Record<string, string>) => void,
  ): unknown;
}

// ---- Zendesk ---------------------------------------------------------------------------------

export interface ZUser {
  id: number;
  name: string;
  email: string;
  role: 'end-user' | 'agent' | 'admin';
}
export interface ZComment {
  id: number;
  author_id: number;
  public: boolean;
  body: string;
  created_at: string;
  attachments?: { id: number; file_name: string; content_type: string; bytes: Buffer }[];
}
export interface ZTicket {
  id: number;
  subject: string;
  status: 'new' | 'open' | 'pending' | 'hold' | 'solved' | 'closed' | 'deleted';
  tags: string[];
  requester_id: number;
  created_at: string;
  updated_at: string;
  comments: ZComment[];
}

export class FakeZendesk extends FakeApi {
  users: ZUser[] = [];
  tickets: ZTicket[] = [];
  /** The one valid login: Basic email/token:token. */
  email = 'agent@acme.test';
  token = 'zd-token-0001';
  /** Tickets per export page (the real API takes per_page up to 1000). */
  pageSize = 2;
  /** Comments per comments page (exercises next_page). */
  commentPage = 2;

  private authorized(headers: http.IncomingHttpHeaders): ZUser | null | undefined {
    const expected = `Basic ${Buffer.from(`${this.email}/token:${this.token}`).toString('base64')}`;
    if (headers.authorization !== expected) return undefined;
    return this.users.find((u) => u.email === this.email) ?? null;
  }

  protected handle(
    method: string,
    u: URL,
    headers: http.IncomingHttpHeaders,
    _body: string,
    send: (s: number, b: unknown, h?: Record<string, string>) => void,
  ): unknown {
    if (method !== 'GET') return send(405, { error: 'MethodNotAllowed' });
    const attachment = /^\/attachments\/token\/(\d+)\/(\d+)$/.exec(u.pathname);
    if (attachment) {
      for (const t of this.tickets)
        for (const c of t.comments) for (const a of c.attachments ?? []) if (String(a.id) === attachment[2]) return send(200, a.bytes);
      return send(404, { error: 'RecordNotFound' });
    }
    const me = this.authorized(headers);
    if (me === undefined) return send(401, { error: "Couldn't authenticate you" });
    if (u.pathname === '/api/v2/users/me.json')
      return send(200, { user: me ?? { id: null, name: 'Anonymous user', email: 'invalid@example.com', role: 'end-user' } });
    if (me?.role === 'end-user') return send(403, { error: 'Forbidden', description: 'You do not have access to this page.' });
    if (u.pathname === '/api/v2/tickets/count.json')
      return send(200, { count: { value: this.tickets.filter((t) => t.status !== 'deleted').length, refreshed_at: new Date().toISOString() } });
    if (u.pathname === '/api/v2/incremental/tickets/cursor.json') {
      // The cursor is the position after the last ticket given, in updated_at order.
      const ordered = [...this.tickets].sort((a, b) => (a.updated_at < b.updated_at ? -1 : a.updated_at > b.updated_at ? 1 : a.id - b.id));
      let from = 0;
      const cursor = u.searchParams.get('cursor');
      if (cursor) {
        const after = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as { updated_at: string; id: number };
        from = ordered.findIndex((t) => t.updated_at > after.updated_at || (t.updated_at === after.updated_at && t.id > after.id));
        if (from < 0) from = ordered.length;
      } else if (u.searchParams.get('start_time') === null) return send(400, { error: 'InvalidValue', description: 'start_time or cursor is required' });
      const size = Math.min(Number(u.searchParams.get('per_page') ?? 1000), this.pageSize);
      const page = ordered.slice(from, from + size);
      const last = page[page.length - 1] ?? (from > 0 ? ordered[from - 1] : undefined);
      const after_cursor = last ? Buffer.from(JSON.stringify({ updated_at: last.updated_at, id: last.id })).toString('base64url') : cursor;
      const userIds = new Set(page.map((t) => t.requester_id));
      return send(200, {
        tickets: page.map(({ comments: _c, ...t }) => ({ ...t, url: `${this.url}/api/v2/tickets/${t.id}.json`, description: _c[0]?.body ?? '' })),
        users: u.searchParams.get('include') === 'users' ? this.users.filter((x) => userIds.has(x.id)) : undefined,
        after_url: after_cursor ? `${this.url}/api/v2/incremental/tickets/cursor.json?cursor=${after_cursor}` : null,
        after_cursor,
        before_cursor: null,
        end_of_stream: from + size >= ordered.length,
      });
    }
    const comments = /^\/api\/v2\/tickets\/(\d+)\/comments\.json$/.exec(u.pathname);
    if (comments) {
      const t = this.tickets.find((x) => String(x.id) === comments[1] && x.status !== 'deleted');
      if (!t) return send(404, { error: 'RecordNotFound' });
      const page = Number(u.searchParams.get('page') ?? 1);
      const slice = t.comments.slice((page - 1) * this.commentPage, page * this.commentPage);
      const authors = new Set(slice.map((c) => c.author_id));
      const more = page * this.commentPage < t.comments.length;
      return send(200, {
        comments: slice.map((c) => ({
          id: c.id,
          type: 'Comment',
          author_id: c.author_id,
          body: c.body,
          html_body: `<div class="zd-comment"><p>${c.body}</p></div>`,
          plain_body: c.body,
          public: c.public,
          created_at: c.created_at,
          attachments: (c.attachments ?? []).map((a) => ({
            id: a.id,
            file_name: a.file_name,
            content_url: `${this.url}/attachments/token/${t.id}/${a.id}`,
            content_type: a.content_type,
            size: a.bytes.length,
          })),
        })),
        users: u.searchParams.get('include') === 'users' ? this.users.filter((x) => authors.has(x.id)) : undefined,
        next_page: more ? `${this.url}/api/v2/tickets/${t.id}/comments.json?include=users&page=${page + 1}` : null,
        previous_page: null,
        count: t.comments.length,
      });
    }
    send(404, { error: 'InvalidEndpoint' });
  }
}

// ---- Help Scout ------------------------------------------------------------------------------

export interface HsPerson {
  id: number;
  type: 'customer' | 'user';
  email: string;
  first: string;
  last: string;
}
export interface HsThread {
  id: number;
  type: 'customer' | 'message' | 'note' | 'lineitem';
  body: string;
  createdAt: string;
  createdBy: HsPerson;
  attachments?: { id: number; filename: string; mimeType: string; bytes: Buffer }[];
}
export interface HsConversation {
  id: number;
  number: number;
  subject: string;
  status: 'active' | 'pending' | 'closed' | 'spam';
  state: 'published' | 'deleted';
  createdAt: string;
  userUpdatedAt: string;
  tags: string[];
  primaryCustomer: HsPerson;
  threads: HsThread[];
}

export class FakeHelpScout extends FakeApi {
  conversations: HsConversation[] = [];
  appId = 'hs-app-0001';
  appSecret = 'hs-secret-0001';
  /** Seconds a token lives (tests make it short to see it renewed). */
  expiresIn = 7200;
  pageSize = 2;
  threadPage = 50;
  readonly tokens: { value: string; expiresAt: number }[] = [];
  /** Tokens revoked early (the next request with one gets 401). */
  readonly revoked = new Set<string>();

  revokeAll(): void {
    for (const t of this.tokens) this.revoked.add(t.value);
  }

  private tokenValid(headers: http.IncomingHttpHeaders): boolean {
    const value = headers.authorization?.replace(/^Bearer /, '');
    const t = this.tokens.find((x) => x.value === value);
    return !!t && t.expiresAt > Date.now() && !this.revoked.has(t.value);
  }

  protected handle(
    method: string,
    u: URL,
    headers: http.IncomingHttpHeaders,
    body: string,
    send: (s: number, b: unknown, h?: Record<string, string>) => void,
  ): unknown {
    if (method === 'POST' && u.pathname === '/v2/oauth2/token') {
      const form = new URLSearchParams(body);
      if (form.get('grant_type') !== 'client_credentials') return send(400, { error: 'unsupported_grant_type' });
      if (form.get('client_id') !== this.appId || form.get('client_secret') !== this.appSecret) return send(401, { error: 'invalid_client' });
      const value = `hs-token-${this.tokens.length + 1}`;
      this.tokens.push({ value, expiresAt: Date.now() + this.expiresIn * 1000 });
      return send(200, { token_type: 'bearer', access_token: value, expires_in: this.expiresIn });
    }
    if (method !== 'GET') return send(405, { error: 'MethodNotAllowed' });
    if (!this.tokenValid(headers)) return send(401, { error: 'invalid_token' });
    if (u.pathname === '/v2/users/me') return send(200, { id: 1, firstName: 'App', lastName: 'User', email: 'owner@acme.test', role: 'owner' });
    const paged = <T>(key: string, all: T[], size: number, page: number, extra: Record<string, unknown> = {}) => ({
      _embedded: { [key]: all.slice((page - 1) * size, page * size) },
      _links: { self: { href: `${this.url}${u.pathname}${u.search}` } },
      page: { size, totalElements: all.length, totalPages: Math.max(1, Math.ceil(all.length / size)), number: page },
      ...extra,
    });
    if (u.pathname === '/v2/conversations') {
      const since = u.searchParams.get('modifiedSince');
      const list = this.conversations
        .filter((c) => !since || c.userUpdatedAt > since)
        .sort((a, b) => (a.userUpdatedAt < b.userUpdatedAt ? -1 : a.userUpdatedAt > b.userUpdatedAt ? 1 : a.id - b.id))
        .map(({ threads: _t, tags, ...c }) => ({
          ...c,
          tags: tags.map((tag, i) => ({ id: i + 1, tag, color: '#929499' })),
          mailboxId: 1,
          type: 'email',
          threads: _t.length,
        }));
      return send(200, paged('conversations', list, this.pageSize, Number(u.searchParams.get('page') ?? 1)));
    }
    const threads = /^\/v2\/conversations\/(\d+)\/threads$/.exec(u.pathname);
    if (threads) {
      const c = this.conversations.find((x) => String(x.id) === threads[1]);
      if (!c) return send(404, { error: 'not found' });
      // Newest first, as the real API lists them.
      const list = [...c.threads]
        .sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1))
        .map(({ attachments, ...t }) => ({
          ...t,
          status: 'active',
          state: 'published',
          customer: c.primaryCustomer,
          _embedded: {
            attachments: (attachments ?? []).map((a) => ({
              id: a.id,
              filename: a.filename,
              mimeType: a.mimeType,
              size: a.bytes.length,
              _links: { data: { href: `${this.url}/v2/conversations/${c.id}/attachments/${a.id}/data` }, web: { href: 'https://secure.helpscout.net/file/x' } },
            })),
          },
        }));
      return send(200, paged('threads', list, this.threadPage, Number(u.searchParams.get('page') ?? 1)));
    }
    const data = /^\/v2\/conversations\/(\d+)\/attachments\/(\d+)\/data$/.exec(u.pathname);
    if (data) {
      for (const c of this.conversations)
        for (const t of c.threads) for (const a of t.attachments ?? []) if (String(a.id) === data[2]) return send(200, { data: a.bytes.toString('base64') });
      return send(404, { error: 'not found' });
    }
    send(404, { error: 'not found' });
  }
}
