// Full-text search across conversations (their messages: subject and body, notes and imported mail
// included) and contacts, limited to what the caller reaches. The index is kept by triggers
// (migration 0016): FTS5 on SQLite, a tsvector table with a GIN index on Postgres.
//
// Speed on a large workspace (200,000 messages): ranking every match is what made a common word
// slow ("refund" matched most messages, and both engines scored and sorted them all), and a prefix
// match is dearer than a whole word (FTS5 gathers every word the prefix begins before it returns
// the first row; a whole word's rowids are read lazily). So:
// - Only the newest RECENT_MATCHES matches are read, in storage order (FTS5 walks its rowids
//   backwards; Postgres checks the newest message ids, which sort by time, then asks its GIN index
//   for a rarer word: `recentMatchIdsPostgres`), and those are ranked here (`rankHits`: subject words count four times, each term's
//   count saturates). A rare word has fewer matches than that, so it is ranked over all of them; a
//   common one among its recent matches, which is what a help desk looking for a customer's words
//   wants first anyway.
// - Whole words are tried first; only when they find fewer than the answer needs are the words also matched
//   as prefixes ("lapt" finds "laptop"), and the two merged.
import { sql } from 'kysely';
import { type Access, canSeeInbox } from '../auth/access.js';
import { listContacts } from '../contacts/list.js';
import type { Ctx } from '../context.js';
import { listItems } from '../conversations/lists.js';
import { readRows } from '../db/readers.js';
import { deletedInboxIds } from '../inboxes/store.js';
import { invalid } from '../platform/errors.js';

const MAX_TERMS = 8;
const SNIPPET_CHARS = 160;
/** How many of the newest matches are ranked (see the header). */
export const RECENT_MATCHES = 200;

/** The words of a query: letters and digits only, so nothing reaches the match syntax unescaped. */
export function searchTerms(q: string): string[] {
  const words =
    q
      .normalize('NFKC')
      .toLocaleLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words)].slice(0, MAX_TERMS);
}

interface Hit {
  message_id: string;
  conversation_id: string;
  inbox_id: string;
  subject: string | null;
  body: string;
  /** Storage order: the FTS rowid on SQLite, the message id on Postgres (both grow with time). */
  pos: number | string;
}

export async function search(ctx: Pick<Ctx, 'db' | 'dialect'>, access: Access, input: { q: string; limit: number; contacts: boolean }) {
  const terms = searchTerms(input.q);
  if (!terms.length) throw invalid('q must contain at least one letter or digit');
  // Several matches may fall in one conversation; ask for more and keep each conversation's best.
  const hits = await matchMessages(ctx, access, terms, input.limit * 4, await deletedInboxIds(ctx.db, access.workspaceId));
  const best = new Map<string, Hit>();
  for (const h of hits) if (!best.has(h.conversation_id) && canSeeInbox(access, h.inbox_id)) best.set(h.conversation_id, h);
  const chosen = [...best.values()].slice(0, input.limit);
  const rows = chosen.length
    ? await ctx.db
        .selectFrom('conversations')
        .selectAll()
        .where(
          'id',
          'in',
          chosen.map((h) => h.conversation_id),
        )
        .execute()
    : [];
  const items = new Map((await listItems(ctx, access, rows)).map((x) => [x.id, x]));
  const contacts = input.contacts ? (await listContacts(ctx, access, { query: input.q.trim().slice(0, 200) }, { limit: Math.min(10, input.limit) })).data : [];
  return {
    conversations: chosen
      .filter((h) => items.has(h.conversation_id))
      .map((h) => ({ conversation: items.get(h.conversation_id)!, message_id: h.message_id, snippet: snippet(h.body, terms) })),
    contacts,
  };
}

async function matchMessages(ctx: Pick<Ctx, 'db' | 'dialect'>, access: Access, terms: string[], limit: number, deletedInboxes: string[]): Promise<Hit[]> {
  const enough = Math.min(limit, RECENT_MATCHES);
  let hits = await recentMatches(ctx, access, terms, 'whole', deletedInboxes, enough);
  if (hits.length < enough) {
    const seen = new Set(hits.map((h) => h.message_id));
    const more = (await recentMatches(ctx, access, terms, 'prefix', deletedInboxes, enough)).filter((h) => !seen.has(h.message_id));
    hits = [...hits, ...more].sort((a, b) => (a.pos < b.pos ? 1 : a.pos > b.pos ? -1 : 0)).slice(0, RECENT_MATCHES);
  }
  return rankHits(hits, terms).slice(0, limit);
}

/** The newest RECENT_MATCHES messages with every term, newest first (at least `enough` when there are). */
async function recentMatches(
  ctx: Pick<Ctx, 'db' | 'dialect'>,
  access: Access,
  terms: string[],
  match: 'whole' | 'prefix',
  deletedInboxes: string[],
  enough: number,
): Promise<Hit[]> {
  const inboxes = access.inboxIds;
  const inboxFilter = inboxes === null ? sql`` : sql`and c.inbox_id in (${inboxes.length ? sql.join(inboxes) : sql`''`})`;
  // Conversations of a deleted inbox are gone for readers at once (the deletion job removes them).
  // A list of ids, not a "not exists" on inboxes: Postgres estimated that anti-join at one row and
  // then walked every message of the workspace (3 s on 200,000 messages).
  const liveInbox = deletedInboxes.length ? sql`and c.inbox_id not in (${sql.join(deletedInboxes)})` : sql``;
  if (ctx.dialect === 'postgres') {
    const ids = await recentMatchIdsPostgres(ctx, access, terms.map((t) => (match === 'prefix' ? `${t}:*` : t)).join(' & '), enough);
    if (!ids.length) return [];
    const r = await sql<Hit>`
      select m.id as message_id, m.conversation_id, c.inbox_id, m.subject, m.body, m.id as pos
      from messages m
      join conversations c on c.id = m.conversation_id
      where m.id in (${sql.join(ids)}) ${inboxFilter} ${liveInbox}
      order by m.id desc`.execute(ctx.db);
    return r.rows;
  }
  const query = terms.map((t) => (match === 'prefix' ? `"${t}"*` : `"${t}"`)).join(' ');
  // Off the event loop (src/db/readers.ts): a common word's matches take milliseconds to walk.
  return readRows(
    ctx.db,
    sql<Hit>`
    select m.id as message_id, m.conversation_id, c.inbox_id, m.subject, m.body, f.rowid as pos
    from messages_fts f
    join messages m on m.rowid = f.rowid
    join conversations c on c.id = m.conversation_id
    where messages_fts match ${query} and m.workspace_id = ${access.workspaceId} ${inboxFilter} ${liveInbox}
    order by f.rowid desc
    limit cast(${RECENT_MATCHES} as integer)`,
  );
}

/** How many of the newest indexed messages Postgres checks in storage order first, and at most. */
const POSTGRES_FIRST_PROBE = 2_000;
const POSTGRES_LONG_PROBE = 50_000;
/** Up to about this many matches in all, the GIN index answers faster than a longer walk (see below). */
const POSTGRES_GIN_MATCHES = 5_000;

/**
 * The ids of the newest matches on Postgres. Its planner cannot tell a word in most messages from a
 * rare one well enough (a GIN bitmap over 145,000 matches took a second; walking the ids for a
 * rare word would read them all), so first the newest 2,000 messages are checked in id order, which
 * finds enough for a common word. What that finds also tells how common the words are: when the
 * whole index would hold more than POSTGRES_GIN_MATCHES matches at that rate, the newest 50,000 are
 * walked (which stops once it has enough); otherwise the GIN index answers, which is quick exactly
 * then. (At 1,000,000 messages a word found once in the first probe had 68 matches: the long walk
 * read all 50,000 ids for 150 ms, the GIN index answered in under a millisecond.) An inbox limit is
 * applied in every step, so a member limited to a quiet inbox still gets their matches.
 */
async function recentMatchIdsPostgres(ctx: Pick<Ctx, 'db'>, access: Access, query: string, enough: number): Promise<string[]> {
  const inboxes = access.inboxIds;
  const reach =
    inboxes === null
      ? sql``
      : sql`and exists (select 1 from messages m join conversations c on c.id = m.conversation_id where m.id = s.message_id and c.inbox_id in (${inboxes.length ? sql.join(inboxes) : sql`''`}))`;
  const newestMatches = async (newest: number) =>
    (
      await sql<{ message_id: string }>`
      select s.message_id from (
        select message_id, document from message_search where workspace_id = ${access.workspaceId} order by message_id desc limit ${newest}
      ) s
      where s.document @@ to_tsquery('simple', ${query}) ${reach}
      order by s.message_id desc
      limit ${RECENT_MATCHES}`.execute(ctx.db)
    ).rows.map((r) => r.message_id);
  const first = await newestMatches(POSTGRES_FIRST_PROBE);
  if (first.length >= enough) return first;
  if (first.length > 0 && (first.length * (await indexedMessagesEstimate(ctx))) / POSTGRES_FIRST_PROBE > POSTGRES_GIN_MATCHES) {
    const longer = await newestMatches(POSTGRES_LONG_PROBE);
    if (longer.length >= enough) return longer;
  }
  // Materialized, so that the matches are gathered through the GIN index first: with "order by …
  // limit" the planner may walk every id backwards instead (130 ms for a prefix nothing begins).
  const all = await sql<{ message_id: string }>`
    with matches as materialized (
      select s.message_id from message_search s
      where s.workspace_id = ${access.workspaceId} and s.document @@ to_tsquery('simple', ${query}) ${reach}
    )
    select message_id from matches order by message_id desc limit ${RECENT_MATCHES}`.execute(ctx.db);
  return all.rows.map((r) => r.message_id);
}

/** Letters and digits without diacritics, lower-cased: how both indexes see words ("Sipariş" is "siparis"). */
function plainWords(text: string): string[] {
  return (
    text
      .normalize('NFKD')
      .replace(/\p{M}/gu, '')
      .toLocaleLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

/**
 * Best first: for each term, the words it begins in the subject (counted four times) and the body,
 * each term's count saturating (a word said ten times is not ten times better); newer first on a tie.
 */
export function rankHits<T extends { subject: string | null; body: string; pos: number | string }>(hits: T[], terms: string[]): T[] {
  const wanted = terms.map((t) => plainWords(t).join(''));
  const score = (h: T) => {
    const subject = plainWords(h.subject ?? '');
    const body = plainWords(h.body);
    let total = 0;
    for (const term of wanted) {
      const n = 4 * subject.filter((w) => w.startsWith(term)).length + body.filter((w) => w.startsWith(term)).length;
      total += n / (n + 1.2);
    }
    return total;
  };
  return hits
    .map((h) => ({ h, score: score(h) }))
    .sort((a, b) => b.score - a.score || (a.h.pos < b.h.pos ? 1 : a.h.pos > b.h.pos ? -1 : 0))
    .map((x) => x.h);
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

/** The planner's count of indexed messages (all workspaces: an upper bound for one), read from the catalog. */
async function indexedMessagesEstimate(ctx: Pick<Ctx, 'db'>): Promise<number> {
  const r = await sql<{ n: number }>`select greatest(reltuples, 0)::float8 as n from pg_class where relname = 'message_search'`.execute(ctx.db);
  return Number(r.rows[0]?.n ?? 0);
}
