// Full-text search across conversations (their messages: subject and body, notes and imported mail
// included) and contacts, limited to what the caller reaches. The index is kept by triggers
// (migration 0016): FTS5 on SQLite, a tsvector table with a GIN index on Postgres.
//
// Ranking every match is what made a common word slow (on 200,000 messages "refund" matched most
// of them, and both engines scored and sorted them all). So the newest RECENT_MATCHES matches are
// read in storage order (FTS5 walks its rowids backwards; Postgres the message ids, which sort by
// time, and stops early), and only those are ranked. A rare word has fewer matches than that, so it
// is ranked over all of them exactly as before; a common one is ranked among its recent matches,
// which is what a help desk searching for a customer's words wants first anyway.
import { sql } from 'kysely';
import { canSeeInbox, type Access } from '../auth/access.js';
import { listContacts } from '../contacts/service.js';
import type { Ctx } from '../context.js';
import { listItems } from '../conversations/service.js';
import { invalid } from '../platform/errors.js';

const MAX_TERMS = 8;
const SNIPPET_CHARS = 160;
/** How many of the newest matches are ranked (see the header). */
export const RECENT_MATCHES = 500;

/** The words of a query: letters and digits only, so nothing reaches the match syntax unescaped. */
export function searchTerms(q: string): string[] {
  const words = q.normalize('NFKC').toLocaleLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words)].slice(0, MAX_TERMS);
}

interface Hit {
  message_id: string;
  conversation_id: string;
  inbox_id: string;
  body: string;
}

export async function search(ctx: Pick<Ctx, 'db' | 'dialect'>, access: Access, input: { q: string; limit: number; contacts: boolean }) {
  const terms = searchTerms(input.q);
  if (!terms.length) throw invalid('q must contain at least one letter or digit');
  // Several matches may fall in one conversation; ask for more and keep each conversation's best.
  const hits = await matchMessages(ctx, access, terms, input.limit * 4);
  const best = new Map<string, Hit>();
  for (const h of hits) if (!best.has(h.conversation_id) && canSeeInbox(access, h.inbox_id)) best.set(h.conversation_id, h);
  const chosen = [...best.values()].slice(0, input.limit);
  const rows = chosen.length ? await ctx.db.selectFrom('conversations').selectAll().where('id', 'in', chosen.map((h) => h.conversation_id)).execute() : [];
  const items = new Map((await listItems(ctx, access, rows)).map((x) => [x.id, x]));
  const contacts = input.contacts ? (await listContacts(ctx, access, { query: input.q.trim().slice(0, 200) }, { limit: Math.min(10, input.limit) })).data : [];
  return {
    conversations: chosen
      .filter((h) => items.has(h.conversation_id))
      .map((h) => ({ conversation: items.get(h.conversation_id)!, message_id: h.message_id, snippet: snippet(h.body, terms) })),
    contacts,
  };
}

async function matchMessages(ctx: Pick<Ctx, 'db' | 'dialect'>, access: Access, terms: string[], limit: number): Promise<Hit[]> {
  const inboxes = access.inboxIds;
  const inboxFilter = inboxes === null ? sql`` : sql`and c.inbox_id in (${inboxes.length ? sql.join(inboxes) : sql`''`})`;
  // Conversations of a deleted inbox are gone for readers at once (the deletion job removes them).
  const liveInbox = sql`and not exists (select 1 from inboxes i where i.id = c.inbox_id and i.deleted_at is not null)`;
  if (ctx.dialect === 'postgres') {
    const query = terms.map((t) => `${t}:*`).join(' & ');
    const r = await sql<Hit>`
      select message_id, conversation_id, inbox_id, body from (
        select m.id as message_id, m.conversation_id, c.inbox_id, m.body, m.created_at, ts_rank(s.document, to_tsquery('simple', ${query})) as rank
        from message_search s
        join messages m on m.id = s.message_id
        join conversations c on c.id = m.conversation_id
        where s.workspace_id = ${access.workspaceId} and s.document @@ to_tsquery('simple', ${query}) ${inboxFilter} ${liveInbox}
        order by s.message_id desc
        limit ${RECENT_MATCHES}
      ) recent
      order by rank desc, created_at desc
      limit ${limit}`.execute(ctx.db);
    return r.rows;
  }
  const match = terms.map((t) => `"${t}"*`).join(' ');
  const r = await sql<Hit>`
    select message_id, conversation_id, inbox_id, body from (
      select m.id as message_id, m.conversation_id, c.inbox_id, m.body, m.created_at, bm25(messages_fts, 4.0, 1.0) as rank
      from messages_fts f
      join messages m on m.rowid = f.rowid
      join conversations c on c.id = m.conversation_id
      where messages_fts match ${match} and m.workspace_id = ${access.workspaceId} ${inboxFilter} ${liveInbox}
      order by f.rowid desc
      limit ${RECENT_MATCHES}
    )
    order by rank, created_at desc
    limit ${limit}`.execute(ctx.db);
  return r.rows;
}

/** A window of the body around the first term it contains, on one line. */
export function snippet(body: string, terms: string[]): string {
  const text = body.replace(/\s+/g, ' ').trim();
  const lower = text.toLocaleLowerCase();
  let at = -1;
  for (const t of terms) {
    const i = lower.indexOf(t);
    if (i !== -1 && (at === -1 || i < at)) at = i;
  }
  if (at === -1 || text.length <= SNIPPET_CHARS) return text.slice(0, SNIPPET_CHARS);
  const start = Math.max(0, Math.min(at - 40, text.length - SNIPPET_CHARS));
  return `${start > 0 ? '…' : ''}${text.slice(start, start + SNIPPET_CHARS).trim()}${start + SNIPPET_CHARS < text.length ? '…' : ''}`;
}
