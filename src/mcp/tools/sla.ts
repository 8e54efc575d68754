// SLA as assistant tools (conversations:read): one conversation's SLA state with its inbox's
// targets, and the open conversations due first. The same service functions as
// GET /v1/conversations/{id}, GET /v1/inboxes/{id}/sla and GET /v1/conversations?sort=sla_due.
import { z } from 'zod';
import { requireScope } from '../../auth/access.js';
import { formatConversation } from '../../conversations/format.js';
import { listConversations } from '../../conversations/lists.js';
import { getConversationFor } from '../../conversations/service.js';
import { getSlaPolicy } from '../../sla/policy.js';
import { defineTool } from '../tool.js';

const readOnly = { readOnlyHint: true, destructiveHint: false, openWorldHint: false };

export const slaTools = [
  defineTool({
    name: 'conversation_sla',
    title: 'SLA state of a conversation',
    description:
      'The SLA of one conversation: per target (first_response, next_response, resolution) its due time, warning time (80 %), breach and met times, counted in the inbox’s business hours; and the inbox’s targets in minutes. sla is null when no SLA applies (no policy, or an imported conversation).',
    input: { conversation_id: z.string().min(1).max(100).describe('the conversation id (cv_…)') },
    annotations: readOnly,
    async run({ conversation_id }, { ctx, access }) {
      requireScope(access, 'conversations:read');
      const row = await getConversationFor(ctx, access, conversation_id);
      const shown = formatConversation(row, []);
      const policy = await getSlaPolicy(ctx, { id: row.inbox_id });
      return { conversation_id: row.id, inbox_id: row.inbox_id, status: row.status, priority: row.priority, sla: shown.sla, policy };
    },
  }),
  defineTool({
    name: 'list_sla_due',
    title: 'Conversations due first',
    description: 'Open conversations of the inboxes this key reaches, the earliest SLA due time first (breached ones lead; those without SLA come last).',
    input: {
      inbox_id: z.string().max(100).optional(),
      assignee_id: z.string().max(100).optional().describe('a person id, or "none" for unassigned'),
      limit: z.number().int().min(1).max(200).optional(),
      cursor: z.string().max(500).optional(),
    },
    annotations: readOnly,
    async run({ inbox_id, assignee_id, limit, cursor }, { ctx, access }) {
      requireScope(access, 'conversations:read');
      return listConversations(ctx, access, { inboxId: inbox_id, status: 'open', assigneeId: assignee_id }, { limit, cursor, sort: 'sla_due' });
    },
  }),
];
