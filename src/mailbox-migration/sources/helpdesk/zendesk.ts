// Zendesk through its REST API, read-only: the incremental ticket export with a cursor
// (after_cursor / end_of_stream, users sideloaded) for tickets changed since the stored cursor,
// each ticket's comments (public ones are messages, private ones notes), attachments by their
// content_url. Authentication: agent e-mail + API token (Basic "email/token:token").
import { SourceError } from '../connect.js';
import type { HelpDeskAttachment, HelpDeskEntry } from './entry.js';
import { type HttpWait, ReadOnlyHttp } from './http.js';
import type { HelpDeskPage, HelpDeskReader, HelpDeskTest, ReaderContext } from './reader.js';

/** Most plans: 700 requests a minute; the incremental export: 10 a minute. */
export const ZENDESK_API = { name: 'zendesk', perMinute: 700 };
export const ZENDESK_EXPORT = { name: 'zendesk_export', perMinute: 10 };
const EXPORT_PAGE = 100;

interface ZUser {
  id: number;
  name?: string | null;
  email?: string | null;
  role?: string | null;
}
interface ZTicket {
  id: number;
  subject?: string | null;
  status: string;
  tags?: string[];
  requester_id?: number | null;
  created_at: string;
  updated_at?: string;
}
interface ZComment {
  id: number;
  author_id: number;
  public: boolean;
  body?: string | null;
  plain_body?: string | null;
  html_body?: string | null;
  created_at: string;
  attachments?: { id: number; file_name: string; content_url: string; content_type?: string; size?: number }[];
}

export class ZendeskReader implements HelpDeskReader {
  readonly provider = 'zendesk';
  private readonly http: ReadOnlyHttp;
  private readonly base: string;

  constructor(
    rc: ReaderContext,
    private readonly creds: { subdomain: string; email: string; token: string },
    onWait?: (w: HttpWait) => void | Promise<void>,
  ) {
    this.base = (rc.ctx.config.migration.zendeskUrl ?? `https://${creds.subdomain}.zendesk.com`).replace(/\/$/, '');
    const basic = `Basic ${Buffer.from(`${creds.email}/token:${creds.token}`).toString('base64')}`;
    this.http = new ReadOnlyHttp({ ctx: rc.ctx, authorization: async () => basic, onWait, sleep: rc.sleep });
  }

  get requests(): number {
    return this.http.requests;
  }

  async test(): Promise<HelpDeskTest> {
    const me = await this.http.getJson<{ user: ZUser }>(`${this.base}/api/v2/users/me.json`, ZENDESK_API, 'Zendesk');
    if (!me.user?.id) throw new SourceError('login', 'Zendesk did not accept the e-mail and API token (signed in as an anonymous user)', 'login');
    if (me.user.role !== 'agent' && me.user.role !== 'admin')
      throw new SourceError(
        'permission',
        `${me.user.email ?? 'this user'} is a ${me.user.role ?? 'user'} in Zendesk; an agent or admin can read every ticket`,
        'login',
      );
    const count = await this.http.getJson<{ count: { value: number } }>(`${this.base}/api/v2/tickets/count.json`, ZENDESK_API, 'Zendesk');
    return {
      signedInAs: me.user.email ?? String(me.user.id),
      tickets: count.count?.value ?? null,
      host: new URL(this.base).host,
      secure: this.base.startsWith('https:'),
    };
  }

  async ticketCount(): Promise<number | null> {
    const count = await this.http.getJson<{ count: { value: number } }>(`${this.base}/api/v2/tickets/count.json`, ZENDESK_API, 'Zendesk');
    return count.count?.value ?? null;
  }

  async page(cursor: string | null): Promise<HelpDeskPage> {
    const url = cursor
      ? `${this.base}/api/v2/incremental/tickets/cursor.json?cursor=${encodeURIComponent(cursor)}&include=users&per_page=${EXPORT_PAGE}`
      : `${this.base}/api/v2/incremental/tickets/cursor.json?start_time=0&include=users&per_page=${EXPORT_PAGE}`;
    const data = await this.http.getJson<{ tickets: ZTicket[]; users?: ZUser[]; after_cursor: string | null; end_of_stream: boolean }>(
      url,
      ZENDESK_EXPORT,
      'the Zendesk ticket export',
    );
    const users = new Map((data.users ?? []).map((u) => [u.id, u]));
    const entries: HelpDeskEntry[] = [];
    const agents = new Set<string>();
    const skipped: Record<string, number> = {};
    for (const ticket of data.tickets ?? []) {
      if (ticket.status === 'deleted') {
        skipped.deleted = (skipped.deleted ?? 0) + 1;
        continue;
      }
      const comments = await this.comments(ticket.id, users);
      const requester = ticket.requester_id ? users.get(ticket.requester_id) : undefined;
      const root = `zendesk.${this.creds.subdomain}.${ticket.id}@import.svc`;
      comments.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id - b.id));
      comments.forEach((c, i) => {
        const author = users.get(c.author_id);
        const role = author?.role === 'agent' || author?.role === 'admin' ? 'agent' : 'customer';
        if (role === 'agent' && author?.email) agents.add(author.email.toLowerCase());
        entries.push({
          key: `zendesk:${ticket.id}:${c.id}`,
          ticketId: String(ticket.id),
          messageId: i === 0 ? root : `zendesk.${this.creds.subdomain}.${ticket.id}.${c.id}@import.svc`,
          inReplyTo: i === 0 ? null : root,
          subject: ticket.subject ?? null,
          sentAt: new Date(c.created_at).toISOString(),
          author: { name: author?.name ?? null, email: author?.email ?? null, externalId: String(c.author_id), role },
          requester: requester ? { name: requester.name ?? null, email: requester.email ?? null, externalId: String(requester.id) } : null,
          note: !c.public,
          text: c.plain_body ?? c.body ?? null,
          html: c.html_body ?? null,
          tags: ticket.tags ?? [],
          status: ticket.status,
          attachments: (c.attachments ?? []).map(
            (a): HelpDeskAttachment => ({
              name: a.file_name,
              contentType: a.content_type ?? 'application/octet-stream',
              size: a.size ?? 0,
              url: a.content_url,
              encoding: 'raw',
            }),
          ),
        });
      });
    }
    return { entries, cursor: data.after_cursor ?? cursor, done: !!data.end_of_stream, agents: [...agents], skipped };
  }

  private async comments(ticketId: number, users: Map<number, ZUser>): Promise<ZComment[]> {
    const out: ZComment[] = [];
    let url: string | null = `${this.base}/api/v2/tickets/${ticketId}/comments.json?include=users`;
    while (url) {
      const data: { comments: ZComment[]; users?: ZUser[]; next_page?: string | null } = await this.http.getJson(url, ZENDESK_API, 'Zendesk comments');
      for (const u of data.users ?? []) users.set(u.id, u);
      out.push(...(data.comments ?? []));
      url = data.next_page ?? null;
    }
    return out;
  }

  async attachment(a: HelpDeskAttachment): Promise<Buffer> {
    const response = await this.http.send('GET', a.url, { bucket: ZENDESK_API });
    if (!response.ok) throw new SourceError('list', `Zendesk answered HTTP ${response.status} for an attachment`, 'protocol');
    return Buffer.from(await response.arrayBuffer());
  }
}
