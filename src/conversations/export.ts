// CSV export of a conversation list (GET /v1/conversations/export.csv): the same filters and order
// as GET /v1/conversations, every page of it, one row per conversation.
import type { Access } from '../auth/access.js';
import type { Ctx } from '../context.js';
import { type CsvCell, csvText } from '../platform/csv.js';
import { invalid } from '../platform/errors.js';
import { type ConversationFilter, type ConversationSort, listConversations } from './lists.js';

export const MAX_EXPORT_CONVERSATIONS = 50_000;

const HEADER = [
  'id',
  'subject',
  'status',
  'priority',
  'inbox_id',
  'contact_id',
  'contact_name',
  'contact_email',
  'assignee_id',
  'team_id',
  'labels',
  'source',
  'spam',
  'created_at',
  'last_message_at',
];

export async function exportConversationsCsv(ctx: Pick<Ctx, 'db'>, access: Access, filter: ConversationFilter, sort?: ConversationSort): Promise<string> {
  const rows: CsvCell[][] = [HEADER];
  let cursor: string | undefined;
  for (;;) {
    const page = await listConversations(ctx, access, filter, { limit: 200, cursor, sort });
    if (rows.length - 1 + page.data.length > MAX_EXPORT_CONVERSATIONS) {
      throw invalid(`more than ${MAX_EXPORT_CONVERSATIONS} conversations match; narrow the filters and export in parts`);
    }
    for (const c of page.data) {
      rows.push([
        c.id,
        c.subject,
        c.status,
        c.priority,
        c.inbox_id,
        c.contact.id,
        c.contact.name,
        c.contact.email,
        c.assignee_id,
        c.team_id,
        c.labels.join('; '),
        c.source,
        c.spam,
        c.created_at,
        c.last_message_at,
      ]);
    }
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
  }
  return csvText(rows);
}
