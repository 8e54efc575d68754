// Snooze as an assistant tool (conversations:write), the same service function as PATCH
// /v1/conversations/{id} with snoozed_until; the key's inbox limit applies.
import { z } from 'zod';
import { requireScope } from '../../auth/access.js';
import { updateConversation } from '../../conversations/changes.js';
import { SNOOZE_UNTIL_REPLY } from '../../conversations/format.js';
import { defineTool } from '../tool.js';

export const snoozeTools = [
  defineTool({
    name: 'snooze_conversation',
    title: 'Snooze',
    description:
      'Snoozes a conversation until a time (ISO 8601 with offset, in the future), or until the customer answers (`customer_reply`); null wakes it now. It leaves the open list and wakes (back to open, the assignee notified) at its time or at the customer’s next message, whichever comes first.',
    input: {
      conversation_id: z.string().min(1).max(100).describe('the conversation id (cv_…)'),
      until: z.union([z.iso.datetime({ offset: true }), z.literal(SNOOZE_UNTIL_REPLY)]).nullable(),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    async run({ conversation_id, until }, { ctx, access }) {
      requireScope(access, 'conversations:write');
      const snoozedUntil = until === null || until === SNOOZE_UNTIL_REPLY ? until : new Date(until);
      return updateConversation(ctx, access, conversation_id, { snoozedUntil });
    },
  }),
];
