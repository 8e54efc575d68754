// Where mail lives: inboxes and their channels (only those the key reaches), and the members one
// can assign conversations to.
import { z } from 'zod';
import { requireInbox } from '../../auth/access.js';
import { listChannels } from '../../channels/service.js';
import { formatInbox, listInboxes } from '../../inboxes/service.js';
import { formatChannels } from '../../mail-accounts/channel-answers.js';
import { listMembers } from '../../members/service.js';
import { defineTool } from '../tool.js';

const readOnly = { readOnlyHint: true, openWorldHint: false } as const;

export const placeTools = [
  defineTool({
    name: 'list_inboxes',
    title: 'List inboxes',
    description:
      'The inboxes this key reaches, each with its channels (e-mail channels show their address, forwarding address and whether an SMTP account is set; passwords never). Use the inbox id in migration_create and the conversation tools.',
    input: {},
    annotations: readOnly,
    async run(_args, { ctx, access }) {
      const inboxes = await listInboxes(ctx, access.workspaceId, access.inboxIds);
      const channels = await listChannels(ctx, access.workspaceId);
      // With each e-mail channel's sign-in state (never a token).
      const shown = await formatChannels(ctx, channels);
      return {
        data: inboxes.map((inbox) => ({
          ...formatInbox(inbox),
          channels: shown.filter((ch) => ch.inbox_id === inbox.id),
        })),
      };
    },
  }),
  defineTool({
    name: 'list_channels',
    title: 'List channels',
    description:
      'The channels (e-mail and chat) of the workspace, or of one inbox, that this key reaches. An e-mail channel with smtp null cannot send replies until its SMTP server, user name and password are set in the panel.',
    input: { inbox_id: z.string().max(100).optional().describe('only this inbox’s channels') },
    annotations: readOnly,
    async run({ inbox_id }, { ctx, access }) {
      if (inbox_id) requireInbox(access, inbox_id);
      const rows = (await listChannels(ctx, access.workspaceId, inbox_id)).filter((ch) => access.inboxIds === null || access.inboxIds.includes(ch.inbox_id));
      return { data: await formatChannels(ctx, rows) };
    },
  }),
  defineTool({
    name: 'list_members',
    title: 'List members',
    description:
      'Members of the workspace (id, name, e-mail, role), to assign conversations to (assign_conversation takes a member’s person_id). Needs conversations:read.',
    input: { limit: z.number().int().min(1).max(200).optional(), cursor: z.string().max(500).optional() },
    annotations: readOnly,
    async run({ limit, cursor }, { ctx, access }) {
      return listMembers(ctx, access, { limit, cursor });
    },
  }),
];
