// Merge, undo a merge and split as assistant tools (conversations:write): the same service
// functions as POST /v1/conversations/{id}/merge, …/unmerge and …/split; the key's inbox limit applies.
import { z } from 'zod';
import { requireScope } from '../../auth/access.js';
import { mergeConversation, unmergeConversation } from '../../conversations/merge.js';
import { splitConversation } from '../../conversations/split.js';
import { defineTool } from '../tool.js';

const conversationId = z.string().min(1).max(100).describe('the conversation id (cv_…)');
const changes = { readOnlyHint: false, destructiveHint: false, openWorldHint: false } as const;

export const mergeTools = [
  defineTool({
    name: 'merge_conversations',
    title: 'Merge conversations',
    description:
      'Merges conversation_id into into_id: every message, note, event, attachment and label moves into the target, participants are united, later mail to either thread lands in the target; the merged one stays as a closed stub. Two e-mail conversations, or a chat into an e-mail conversation of the same contact. Nothing is sent. Can be undone for 24 hours with unmerge_conversation.',
    input: { conversation_id: conversationId, into_id: z.string().min(1).max(100).describe('the conversation to merge into') },
    annotations: changes,
    async run({ conversation_id, into_id }, { ctx, access }) {
      requireScope(access, 'conversations:write');
      return mergeConversation(ctx, access, conversation_id, into_id);
    },
  }),
  defineTool({
    name: 'unmerge_conversation',
    title: 'Undo a merge',
    description: 'Undoes the merge of a stub (within 24 hours): exactly the rows the merge moved go back.',
    input: { conversation_id: conversationId.describe('the merged stub (cv_…)') },
    annotations: changes,
    async run({ conversation_id }, { ctx, access }) {
      requireScope(access, 'conversations:write');
      return unmergeConversation(ctx, access, conversation_id);
    },
  }),
  defineTool({
    name: 'split_conversation',
    title: 'Split a conversation',
    description:
      'Moves a message and the later messages of its thread (by In-Reply-To/References) into a new conversation; their Message-IDs follow them. Nothing is sent.',
    input: { conversation_id: conversationId, message_id: z.string().min(1).max(100).describe('the first message to move (m_…)') },
    annotations: changes,
    async run({ conversation_id, message_id }, { ctx, access }) {
      requireScope(access, 'conversations:write');
      return splitConversation(ctx, access, conversation_id, message_id);
    },
  }),
];
