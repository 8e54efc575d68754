// The query of a conversation list, shared by GET /v1/conversations and its CSV export
// (./export-routes.ts): a saved view, the filters (./filters.ts), custom fields and the sort.
import { z } from '@hono/zod-openapi';
import type { Access } from '../auth/access.js';
import type { Ctx } from '../context.js';
import { customFieldConditions, customFieldParams } from '../custom-fields/store.js';
import { textUpTo } from '../http/openapi.js';
import { getView, viewConditions } from '../views/service.js';
import { filterFromQuery, filterQueryShape } from './filters.js';
import type { ConversationFilter, ConversationSort } from './lists.js';
import { MAX_LABEL_LENGTH } from './service.js';

export const conversationListQuery = {
  view: z
    .string()
    .max(100)
    .optional()
    .openapi({ description: 'a saved view’s id: its filter and sort (the other parameters narrow it further; `sort` overrides)' }),
  inbox_id: z.string().max(2000).optional().openapi({ description: 'comma-separated inbox ids' }),
  status: z.string().max(100).optional().openapi({ description: 'comma-separated: open, pending, closed' }),
  assignee_id: z.string().max(2000).optional().openapi({ description: 'comma-separated person ids; `none`: unassigned; `me`: the signed-in member' }),
  team_id: z.string().max(2000).optional().openapi({
    description: 'comma-separated team ids; `none`: in no team; `mine`: in any team the signed-in member belongs to (the panel’s “My teams”)',
  }),
  label: textUpTo(MAX_LABEL_LENGTH).optional(),
  contact_id: z.string().max(100).optional(),
  spam: z.enum(['true', 'false']).optional(),
  imported: z.enum(['true', 'false']).optional(),
  snoozed: z.enum(['true', 'false']).optional().openapi({
    description: 'true: only snoozed conversations (the Snoozed view); false: none. Without it, `status=open` leaves snoozed conversations out',
  }),
  ...filterQueryShape,
  sort: z.enum(['created', 'activity', 'sla_due']).optional().openapi({
    description: 'created (default): newest first; activity: latest message first; sla_due: the earliest SLA due time first (breached first, none last)',
  }),
};

const listQueryObject = z.object(conversationListQuery);

/** The list's filter and sort from the query (`queries`: every parameter, for `custom_field.<key>`). */
export async function conversationListFilter(
  ctx: Ctx,
  access: Access,
  q: z.infer<typeof listQueryObject>,
  queries: Record<string, string[]>,
): Promise<{ filter: ConversationFilter; sort: ConversationSort | undefined }> {
  const customFields = await customFieldConditions(ctx.db, access.workspaceId, 'conversation', customFieldParams(queries));
  const view = q.view ? await getView(ctx, access, q.view) : null;
  const conditions = [...(view ? [viewConditions(view)] : []), filterFromQuery(q)];
  return { filter: { label: q.label, contactId: q.contact_id, conditions, customFields }, sort: q.sort ?? view?.sort };
}
