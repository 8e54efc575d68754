// Teams as assistant tools: list the teams (conversations:read) and put a conversation in a team or
// take it out (conversations:write), the same service functions as GET /v1/teams and PATCH
// /v1/conversations/{id} with team_id; the key's inbox limit applies.
import { z } from 'zod';
import { requireScope } from '../../auth/access.js';
import { updateConversation } from '../../conversations/changes.js';
import { listTeams } from '../../teams/service.js';
import { defineTool } from '../tool.js';

export const teamTools = [
  defineTool({
    name: 'list_teams',
    title: 'Teams',
    description: 'The workspace’s teams: members (with availability and open conversations), the inboxes they serve, auto-assignment.',
    input: {},
    annotations: { readOnlyHint: true, openWorldHint: false },
    async run(_input, { ctx, access }) {
      requireScope(access, 'conversations:read');
      return listTeams(ctx, access);
    },
  }),
  defineTool({
    name: 'assign_conversation_team',
    title: 'Assign to a team',
    description: 'Puts a conversation in a team (team id, see list_teams), beside its assignee, or takes it out of its team with null.',
    input: { conversation_id: z.string().min(1).max(100).describe('the conversation id (cv_…)'), team_id: z.string().max(100).nullable() },
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    async run({ conversation_id, team_id }, { ctx, access }) {
      requireScope(access, 'conversations:write');
      return updateConversation(ctx, access, conversation_id, { teamId: team_id });
    },
  }),
];
