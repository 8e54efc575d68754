// /v1/teams (issue 36): every member reads the teams; owners and admins (keys with workspace:manage) manage them.
import { createRoute, z } from '@hono/zod-openapi';
import { authorize } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody } from '../http/openapi.js';
import {
  ASSIGNMENT_MODES,
  createTeam,
  deleteTeam,
  getTeam,
  listTeams,
  MAX_CAPACITY,
  MAX_NAME_LENGTH,
  MAX_TEAM_INBOXES,
  MAX_TEAM_MEMBERS,
  updateTeam,
} from './service.js';

const Mode = z.enum(ASSIGNMENT_MODES as ['off', 'round_robin', 'least_busy']).openapi({
  description: 'auto-assignment of the team’s new and reopened unassigned conversations among its available members: off, round_robin or least_busy',
});
const Capacity = z.number().int().min(1).max(MAX_CAPACITY).nullable().openapi({
  description: 'auto-assignment skips a member with this many open conversations assigned (workspace-wide); null: no limit',
});

const TeamBody = z
  .object({
    name: z
      .string()
      .max(MAX_NAME_LENGTH * 4)
      .openapi({ example: 'Support' }),
    member_ids: z.array(z.string().max(100)).max(MAX_TEAM_MEMBERS).optional().openapi({ description: 'person ids of members of the workspace' }),
    inbox_ids: z
      .array(z.string().max(100))
      .max(MAX_TEAM_INBOXES)
      .optional()
      .openapi({ description: 'inboxes the team serves: a new conversation there joins the team (the oldest team naming the inbox)' }),
    assignment: Mode.optional(),
    capacity: Capacity.optional(),
  })
  .strict();

const TeamSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    member_ids: z.array(z.string()),
    inbox_ids: z.array(z.string()),
    assignment: Mode,
    capacity: z.number().int().nullable(),
    members: z.array(
      z.object({
        person_id: z.string(),
        availability: z.enum(['auto', 'available', 'away']).openapi({ description: 'the member’s choice (auto: available while online in the panel)' }),
        online: z.boolean(),
        available: z.boolean().openapi({ description: 'whether auto-assignment may give them a conversation now (capacity aside)' }),
        open_conversations: z.number().int().openapi({ description: 'open conversations assigned to them, workspace-wide' }),
      }),
    ),
    open_conversations: z.number().int().openapi({ description: 'open conversations of the team (spam aside)' }),
    unassigned_conversations: z.number().int().openapi({ description: 'of those, the ones nobody is assigned' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Team');

const params = z.object({ teamId: idParam('teamId', 'team_01hxyz') });

export function registerTeamRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/teams',
      tags: ['teams'],
      summary: 'The workspace’s teams, by name (every member reads them)',
      security: bearer,
      responses: { 200: jsonAnswer(z.object({ data: z.array(TeamSchema), next_cursor: z.null() }), 'every team (at most 200)') },
    }),
    async (c) => c.json(await listTeams(ctx, await requireAccess(c, ctx)), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/teams',
      tags: ['teams'],
      summary: 'Make a team (owners and admins)',
      description: 'Names are unique per workspace regardless of case (409 team_name_taken); every other problem is named in `issues`.',
      security: bearer,
      request: { body: jsonBody(TeamBody) },
      responses: { 201: jsonAnswer(TeamSchema, 'the team'), 409: { description: 'team_name_taken or too_many_teams' } },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'teams:manage');
      const b = c.req.valid('json');
      return c.json(
        await createTeam(ctx, access, { name: b.name, memberIds: b.member_ids, inboxIds: b.inbox_ids, assignment: b.assignment, capacity: b.capacity }),
        201,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/teams/{teamId}',
      tags: ['teams'],
      summary: 'One team',
      security: bearer,
      request: { params },
      responses: { 200: jsonAnswer(TeamSchema, 'the team') },
    }),
    async (c) => c.json(await getTeam(ctx, await requireAccess(c, ctx), c.req.valid('param').teamId), 200),
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/teams/{teamId}',
      tags: ['teams'],
      summary: 'Change a team (owners and admins)',
      description:
        '`member_ids` and `inbox_ids` replace the lists. A member taken out of the team is unassigned from its conversations that are not closed (they stay in the team), each with a timeline line and one conversation.updated.',
      security: bearer,
      request: { params, body: jsonBody(TeamBody.partial().strict()) },
      responses: { 200: jsonAnswer(TeamSchema, 'the team as it is now'), 409: { description: 'team_name_taken' } },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'teams:manage');
      const b = c.req.valid('json');
      return c.json(
        await updateTeam(ctx, access, c.req.valid('param').teamId, {
          name: b.name,
          memberIds: b.member_ids,
          inboxIds: b.inbox_ids,
          assignment: b.assignment,
          capacity: b.capacity,
        }),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/teams/{teamId}',
      tags: ['teams'],
      summary: 'Delete a team (owners and admins)',
      description:
        'Its conversations that are not closed leave the team (assignees keep them), each with a timeline line and one conversation.updated; closed ones leave it quietly.',
      security: bearer,
      request: { params },
      responses: { 200: jsonAnswer(z.object({ team_id: z.string(), conversations_updated: z.number().int() }), 'deleted') },
    }),
    async (c) => c.json(await deleteTeam(ctx, await requireAccess(c, ctx), c.req.valid('param').teamId), 200),
  );
}
