// Forwarding and starting conversations by mail as assistant tools (conversations:write), the same
// service functions as POST /v1/conversations/{id}/forward and POST /v1/conversations; the key's
// inbox limit applies. Replies with recipients are the `reply` tool (./conversations.ts).
import { z } from 'zod';
import { requireScope } from '../../auth/access.js';
import { forwardMessage } from '../../conversations/forward.js';
import { MAX_API_BODY_CHARS } from '../../conversations/messages.js';
import { MAX_RECIPIENTS } from '../../conversations/participants.js';
import { MAX_SUBJECT_LENGTH } from '../../conversations/service.js';
import { startConversationByMail } from '../../conversations/start-by-mail.js';
import { defineTool } from '../tool.js';

const list = (what: string) =>
  z.array(z.string().max(500)).max(MAX_RECIPIENTS).describe(`${what}: each addr or "Name <addr>", at most ${MAX_RECIPIENTS} in to, cc and bcc together`);
const memberId = z.string().max(100).optional().describe('write on behalf of this member (person id, see list_members)');
const sends = { readOnlyHint: false, destructiveHint: false, openWorldHint: true } as const;

export const composeTools = [
  defineTool({
    name: 'forward_message',
    title: 'Forward a message',
    description:
      'Forwards one message of a conversation by e-mail (subject "Fwd: …", the original’s From/Date/Subject/To quoted under an optional note, its attachments copied unless include_attachments is false). Answers to it come back into the same conversation. The recipients do not become participants. A chat message is forwarded through the inbox’s e-mail channel (no_email_channel when it has none).',
    input: {
      conversation_id: z.string().min(1).max(100).describe('the conversation id (cv_…)'),
      message_id: z.string().min(1).max(100).describe('the message to forward (m_…), see read_conversation'),
      to: list('To (at least one)'),
      cc: list('Cc').optional(),
      bcc: list('Bcc').optional(),
      note: z.string().max(MAX_API_BODY_CHARS).optional().describe('plain text above the forwarded message'),
      include_attachments: z.boolean().optional().describe('default true'),
      member_id: memberId,
    },
    annotations: sends,
    async run({ conversation_id, message_id, to, cc, bcc, note, include_attachments, member_id }, { ctx, access }) {
      requireScope(access, 'conversations:write');
      return forwardMessage(ctx, access, conversation_id, {
        messageId: message_id,
        to,
        cc,
        bcc,
        body: note,
        includeAttachments: include_attachments,
        memberId: member_id,
      });
    },
  }),
  defineTool({
    name: 'start_conversation',
    title: 'Start a conversation by e-mail',
    description:
      'Writes first: creates an e-mail conversation in an inbox (status pending) and mails the first message through its e-mail channel. The first To is the contact (a contact id ct_… or an address; an unknown address makes a contact); To and Cc become participants, Bcc never does. The customer’s answer threads into it.',
    input: {
      inbox_id: z.string().min(1).max(100),
      channel_id: z.string().max(100).optional().describe('an e-mail channel of the inbox (default its first)'),
      to: list('To (at least one; a contact id ct_… is written to at its first address)'),
      cc: list('Cc').optional(),
      bcc: list('Bcc').optional(),
      subject: z.string().min(1).max(MAX_SUBJECT_LENGTH),
      body: z.string().min(1).max(MAX_API_BODY_CHARS).describe('plain text'),
      member_id: memberId,
    },
    annotations: sends,
    async run({ inbox_id, channel_id, to, cc, bcc, subject, body, member_id }, { ctx, access }) {
      requireScope(access, 'conversations:write');
      return startConversationByMail(ctx, access, { inboxId: inbox_id, channelId: channel_id, to, cc, bcc, subject, body, memberId: member_id });
    },
  }),
];
