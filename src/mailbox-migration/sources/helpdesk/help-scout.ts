// Help Scout through its Mailbox API 2.0, read-only: an OAuth client-credentials token (the one
// POST, to the token URL only; renewed before it expires and after a 401), conversations paged
// (page / totalPages) in modifiedAt order from the stored modifiedSince, each conversation's threads
// (customer: in; message: out; note: notes; chat and phone by who wrote them), attachments through
// their data endpoint ({data: base64}).
import { SourceError } from '../connect.js';
import type { HelpDeskAttachment, HelpDeskEntry } from './entry.js';
import { type HttpWait, httpFailure, ReadOnlyHttp } from './http.js';
import type { HelpDeskPage, HelpDeskReader, HelpDeskTest, ReaderContext } from './reader.js';

/** Help Scout: 400 requests a minute. */
export const HELP_SCOUT_API = { name: 'help_scout', perMinute: 400 };

interface HsPerson {
  id?: number;
  type?: string;
  email?: string | null;
  first?: string | null;
  last?: string | null;
}
interface HsConversation {
  id: number;
  subject?: string | null;
  status: string;
  state?: string;
  createdAt: string;
  userUpdatedAt?: string | null;
  tags?: { id?: number; tag: string }[];
  primaryCustomer?: HsPerson | null;
}
interface HsThread {
  id: number;
  type: string;
  body?: string | null;
  createdAt: string;
  createdBy?: HsPerson | null;
  customer?: HsPerson | null;
  _embedded?: { attachments?: { id: number; filename: string; mimeType?: string; size?: number; _links?: { data?: { href?: string } } }[] };
}
interface HsPaged<K extends string, T> {
  _embedded?: Record<K, T[]>;
  page?: { size: number; totalElements: number; totalPages: number; number: number };
}

/** The stored cursor: conversations modified since this time, and the page to read next. */
export interface HelpScoutCursor {
  modified_since: string | null;
  page: number;
  /** The newest modification seen in this pass (the next pass starts there). */
  newest: string | null;
}

const nameOf = (p: HsPerson | null | undefined) => [p?.first, p?.last].filter(Boolean).join(' ') || null;
const stripTags = (html: string) =>
  html
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/p>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .trim();

export class HelpScoutReader implements HelpDeskReader {
  readonly provider = 'help_scout';
  private readonly http: ReadOnlyHttp;
  private readonly base: string;
  private token: { value: string; expiresAt: number } | null = null;

  constructor(
    rc: ReaderContext,
    private readonly creds: { appId: string; appSecret: string },
    onWait?: (w: HttpWait) => void | Promise<void>,
  ) {
    this.base = (rc.ctx.config.migration.helpScoutUrl ?? 'https://api.helpscout.net').replace(/\/$/, '');
    this.http = new ReadOnlyHttp({
      ctx: rc.ctx,
      tokenUrl: this.tokenUrl,
      authorization: async ({ renew }) => `Bearer ${await this.accessToken(renew)}`,
      onWait,
      sleep: rc.sleep,
    });
  }

  get tokenUrl(): string {
    return `${this.base}/v2/oauth2/token`;
  }

  get requests(): number {
    return this.http.requests;
  }

  /** The client-credentials token, asked again a minute before it expires (or when refused). */
  private async accessToken(renew: boolean): Promise<string> {
    if (!renew && this.token && this.token.expiresAt - 60_000 > Date.now()) return this.token.value;
    const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: this.creds.appId, client_secret: this.creds.appSecret }).toString();
    const response = await this.http.send('POST', this.tokenUrl, {
      bucket: HELP_SCOUT_API,
      body,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      auth: false,
    });
    if (!response.ok) {
      const text = await response.text().catch(() => '');
      if (response.status === 400 || response.status === 401)
        throw new SourceError(
          'login',
          `Help Scout refused the app id and secret (HTTP ${response.status}${/invalid_client/.test(text) ? ', invalid_client' : ''})`,
          'login',
        );
      throw httpFailure(response.status, 'the Help Scout token endpoint');
    }
    const data = (await response.json()) as { access_token: string; expires_in?: number };
    this.token = { value: data.access_token, expiresAt: Date.now() + (data.expires_in ?? 7200) * 1000 };
    return this.token.value;
  }

  async test(): Promise<HelpDeskTest> {
    await this.accessToken(true);
    const me = await this.http.getJson<HsPerson & { role?: string }>(`${this.base}/v2/users/me`, HELP_SCOUT_API, 'Help Scout');
    const tickets = await this.ticketCount();
    return { signedInAs: me.email ?? `app ${this.creds.appId}`, tickets, host: new URL(this.base).host, secure: this.base.startsWith('https:') };
  }

  async ticketCount(): Promise<number | null> {
    const data = await this.http.getJson<HsPaged<'conversations', HsConversation>>(
      `${this.base}/v2/conversations?status=all&page=1`,
      HELP_SCOUT_API,
      'Help Scout',
    );
    return data.page?.totalElements ?? null;
  }

  async page(raw: string | null): Promise<HelpDeskPage> {
    const cursor: HelpScoutCursor = raw ? (JSON.parse(raw) as HelpScoutCursor) : { modified_since: null, page: 1, newest: null };
    const params = new URLSearchParams({ status: 'all', sortField: 'modifiedAt', sortOrder: 'asc', page: String(cursor.page) });
    if (cursor.modified_since) params.set('modifiedSince', cursor.modified_since);
    const data = await this.http.getJson<HsPaged<'conversations', HsConversation>>(
      `${this.base}/v2/conversations?${params}`,
      HELP_SCOUT_API,
      'Help Scout conversations',
    );
    const entries: HelpDeskEntry[] = [];
    const agents = new Set<string>();
    const skipped: Record<string, number> = {};
    let newest = cursor.newest;
    for (const c of data._embedded?.conversations ?? []) {
      const modified = c.userUpdatedAt ?? c.createdAt;
      if (!newest || modified > newest) newest = modified;
      if (c.state === 'deleted' || c.status === 'spam') {
        const reason = c.state === 'deleted' ? 'deleted' : 'spam';
        skipped[reason] = (skipped[reason] ?? 0) + 1;
        continue;
      }
      const threads = await this.threads(c.id);
      threads.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id - b.id));
      const root = `helpscout.${c.id}@import.svc`;
      const customer = c.primaryCustomer;
      let first = true;
      for (const t of threads) {
        const kind = t.type;
        if (!['customer', 'message', 'reply', 'note', 'chat', 'phone'].includes(kind)) continue;
        const byUser = t.createdBy?.type === 'user' || kind === 'message' || kind === 'reply' || kind === 'note';
        const author = t.createdBy ?? (byUser ? null : (t.customer ?? customer));
        if (byUser && author?.email) agents.add(author.email.toLowerCase());
        entries.push({
          key: `help_scout:${c.id}:${t.id}`,
          ticketId: String(c.id),
          messageId: first ? root : `helpscout.${c.id}.${t.id}@import.svc`,
          inReplyTo: first ? null : root,
          subject: c.subject ?? null,
          sentAt: new Date(t.createdAt).toISOString(),
          author: {
            name: nameOf(author),
            email: author?.email ?? null,
            externalId: author?.id !== undefined ? String(author.id) : null,
            role: byUser ? 'agent' : 'customer',
          },
          requester: customer
            ? { name: nameOf(customer), email: customer.email ?? null, externalId: customer.id !== undefined ? String(customer.id) : null }
            : null,
          note: kind === 'note',
          text: t.body ? stripTags(t.body) : null,
          html: t.body ?? null,
          tags: (c.tags ?? []).map((x) => x.tag),
          status: c.status,
          attachments: (t._embedded?.attachments ?? []).map(
            (a): HelpDeskAttachment => ({
              name: a.filename,
              contentType: a.mimeType ?? 'application/octet-stream',
              size: a.size ?? 0,
              url: a._links?.data?.href ?? `${this.base}/v2/conversations/${c.id}/attachments/${a.id}/data`,
              encoding: 'json_base64',
            }),
          ),
        });
        first = false;
      }
    }
    const totalPages = data.page?.totalPages ?? 1;
    const done = cursor.page >= totalPages;
    // Done: the next pass reads what changed since the newest modification seen.
    const next: HelpScoutCursor = done
      ? { modified_since: newest ?? cursor.modified_since, page: 1, newest: null }
      : { ...cursor, page: cursor.page + 1, newest };
    return { entries, cursor: JSON.stringify(next), done, agents: [...agents], skipped };
  }

  private async threads(conversationId: number): Promise<HsThread[]> {
    const out: HsThread[] = [];
    for (let page = 1; ; page++) {
      const data = await this.http.getJson<HsPaged<'threads', HsThread>>(
        `${this.base}/v2/conversations/${conversationId}/threads?page=${page}`,
        HELP_SCOUT_API,
        'Help Scout threads',
      );
      out.push(...(data._embedded?.threads ?? []));
      if (page >= (data.page?.totalPages ?? 1)) return out;
    }
  }

  async attachment(a: HelpDeskAttachment): Promise<Buffer> {
    const data = await this.http.getJson<{ data: string }>(a.url, HELP_SCOUT_API, 'a Help Scout attachment');
    return Buffer.from(data.data ?? '', 'base64');
  }
}
