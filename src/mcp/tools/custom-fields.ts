// Custom fields as assistant tools (issue 37): list the workspace's fields (conversations:read) and
// set a conversation's (conversations:write) or a contact's (contacts:write) values, through the
// same service functions as GET /v1/custom-fields and PATCH …/{id} with custom_fields (checked by
// type; null clears). read_conversation and list_conversations show the values too.
import { z } from 'zod';
import { requireScope } from '../../auth/access.js';
import { formatContact } from '../../contacts/format.js';
import { updateContact } from '../../contacts/service.js';
import { updateConversation } from '../../conversations/changes.js';
import { formatField } from '../../custom-fields/format.js';
import { listFields } from '../../custom-fields/service.js';
import { customFieldsOf } from '../../custom-fields/store.js';
import { defineTool } from '../tool.js';

const values = z
  .record(z.string().max(100), z.unknown())
  .describe(
    'values by field key (see list_custom_fields): text, link (http/https) and single_select as strings, number, date as YYYY-MM-DD, checkbox as true/false, multi_select as a list of options; null clears',
  );
const changes = { readOnlyHint: false, destructiveHint: false, openWorldHint: false } as const;

export const customFieldTools = [
  defineTool({
    name: 'list_custom_fields',
    title: 'Custom fields',
    description:
      'The workspace’s custom fields of conversations and contacts: key, label, type, options of selects, and whether a conversation field must be filled before closing.',
    input: { object: z.enum(['conversation', 'contact']).optional() },
    annotations: { readOnlyHint: true, openWorldHint: false },
    async run({ object }, { ctx, access }) {
      requireScope(access, 'conversations:read');
      return { data: (await listFields(ctx, access, object)).map(formatField) };
    },
  }),
  defineTool({
    name: 'set_conversation_custom_fields',
    title: 'Set a conversation’s custom fields',
    description: 'Sets custom field values of a conversation (keys not named stay); a value the field cannot hold is refused with the field named.',
    input: { conversation_id: z.string().min(1).max(100).describe('the conversation id (cv_…)'), values },
    annotations: changes,
    async run({ conversation_id, values }, { ctx, access }) {
      requireScope(access, 'conversations:write');
      return updateConversation(ctx, access, conversation_id, { customFields: values });
    },
  }),
  defineTool({
    name: 'set_contact_custom_fields',
    title: 'Set a contact’s custom fields',
    description: 'Sets custom field values of a contact (keys not named stay); a value the field cannot hold is refused with the field named.',
    input: { contact_id: z.string().min(1).max(100).describe('the contact id (ct_…)'), values },
    annotations: changes,
    async run({ contact_id, values }, { ctx, access }) {
      requireScope(access, 'contacts:write');
      const view = await updateContact(ctx, access, contact_id, { customFields: values });
      const shown = await customFieldsOf(ctx.db, access.workspaceId, 'contact', [view.contact.id]);
      return { ...formatContact(view, { inboxIds: access.inboxIds }), custom_fields: shown.get(view.contact.id)! };
    },
  }),
];
