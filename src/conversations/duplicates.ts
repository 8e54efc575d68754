// Which conversations this one could be merged into: "possible duplicates" (the same contact, open,
// active in the last 24 hours, a similar subject; shown by the panel, never merged by themselves)
// and the merge dialog's search by subject or contact.
import type { Access } from '../auth/access.js';
import { listContacts } from '../contacts/list.js';
import type { Ctx } from '../context.js';
import { inboxIsDeleted } from '../inboxes/store.js';
import { DAY, iso } from '../platform/clock.js';
import type { ConversationRow } from './format.js';
import { listItems } from './lists.js';
import { mergeRefusal } from './merge.js';
import { getConversationFor } from './service.js';

/** How far back a possible duplicate may have been active. */
export const DUPLICATE_WINDOW_MS = DAY;

const PREFIX = /^\s*((re|fw|fwd|aw|wg|sv|vs|ynt|ilt|cvp|antw|tr|r)\s*(\[\d+\]|\(\d+\))?\s*:\s*)+/i;

/** A subject as people mean it: without Re:/Fwd: prefixes, [tags] and punctuation, lower case. */
export function subjectWords(subject: string | null): string[] {
  let s = (subject ?? '').normalize('NFKC');
  for (let previous = ''; previous !== s; ) {
    previous = s;
    s = s.replace(PREFIX, '').replace(/^\s*\[[^\]]*\]\s*/, '');
  }
  return s
    .toLocaleLowerCase('en')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0);
}

/** Similar subjects: the same words, one's words all within the other's, or most words shared. */
export function similarSubjects(a: string | null, b: string | null): boolean {
  const x = subjectWords(a);
  const y = subjectWords(b);
  if (x.length === 0 || y.length === 0) return false;
  if (x.join(' ') === y.join(' ')) return true;
  const sx = new Set(x);
  const sy = new Set(y);
  const shared = [...sx].filter((w) => sy.has(w)).length;
  const smaller = Math.min(sx.size, sy.size);
  if (shared === smaller && smaller >= 2) return true;
  return shared / new Set([...sx, ...sy]).size >= 0.6;
}

function candidates(ctx: Pick<Ctx, 'db'>, access: Access, self: ConversationRow) {
  let q = ctx.db
    .selectFrom('conversations')
    .selectAll()
    .where('workspace_id', '=', access.workspaceId)
    .where('id', '!=', self.id)
    .where('merged_into_id', 'is', null)
    .where('source', '=', 'email')
    .where((eb) => eb.not(inboxIsDeleted('conversations.inbox_id')));
  if (access.inboxIds !== null) q = access.inboxIds.length ? q.where('inbox_id', 'in', access.inboxIds) : q.where('inbox_id', '=', '');
  if (self.source === 'chat') q = q.where('contact_id', '=', self.contact_id);
  return q;
}

/** GET /v1/conversations/{id}/duplicates: open conversations of the same contact from the last 24 hours with a similar subject. */
export async function possibleDuplicates(ctx: Pick<Ctx, 'db' | 'clock'>, access: Access, id: string) {
  const self = await getConversationFor(ctx, access, id);
  if (self.merged_into_id || self.spam === 1) return { data: [] };
  const since = iso(new Date(ctx.clock.now().getTime() - DUPLICATE_WINDOW_MS));
  const rows = await candidates(ctx, access, self)
    .where('contact_id', '=', self.contact_id)
    .where('status', '!=', 'closed')
    .where('spam', '=', 0)
    .where('last_message_at', '>=', since)
    .orderBy('last_message_at', 'desc')
    .limit(50)
    .execute();
  const similar = rows.filter((r) => mergeRefusal(self, r) === null && similarSubjects(self.subject, r.subject)).slice(0, 5);
  return { data: await listItems(ctx, access, similar) };
}

/** GET /v1/conversations/{id}/merge-targets?q=: conversations it can be merged into, by subject or contact (name or address). */
export async function mergeTargets(ctx: Pick<Ctx, 'db'>, access: Access, id: string, query: string | undefined, limit = 20) {
  const self = await getConversationFor(ctx, access, id);
  if (self.merged_into_id) return { data: [] };
  let q = candidates(ctx, access, self);
  const text = query
    ?.trim()
    .toLowerCase()
    .replace(/[\\%_]/g, '');
  if (text) {
    const contacts = await listContacts(ctx, access, { query: text }, { limit: 200 });
    const contactIds = contacts.data.map((c) => c.id);
    const like = `%${text}%`;
    q = q.where((eb) =>
      eb.or([eb(eb.fn('lower', ['subject']), 'like', like), ...(contactIds.length ? [eb('contact_id', 'in', contactIds)] : []), eb('id', '=', query!.trim())]),
    );
  } else q = q.where('contact_id', '=', self.contact_id);
  const rows = await q.orderBy('last_message_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return {
    data: await listItems(
      ctx,
      access,
      rows.filter((r) => mergeRefusal(self, r) === null),
    ),
  };
}
