// GET/PUT /v1/inboxes/{inboxId}/assignment (the inbox's auto-assignment) and GET/PUT
// /v1/me/availability (a member's own: auto, available or away), issue 36.
import { createRoute, z } from '@hono/zod-openapi';
import { authorize, requireInbox } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody } from '../http/openapi.js';
import { resolveInbox } from '../inboxes/service.js';
import { forbidden } from '../platform/errors.js';
import { getInboxAssignment, MAX_CAPACITY, myAvailability, setInboxAssignment, setMyAvailability } from './service.js';

const Mode = z.enum(['off', 'round_robin', 'least_busy']);
const AssignmentBody = z
  .object({
    assignment: Mode.openapi({
      description: 'off, round_robin or least_busy among the members who reach the inbox (a team’s own setting wins for its conversations)',
    }),
    capacity: z
      .number()
      .int()
      .min(1)
      .max(MAX_CAPACITY)
      .nullable()
      .openapi({ description: 'skip members with this many open conversations assigned; null: no limit' }),
  })
  .strict()
  .openapi('InboxAssignmentPut');
const AssignmentSchema = z
  .object({ inbox_id: z.string(), assignment: Mode, capacity: z.number().int().nullable(), updated_at: z.string().nullable() })
  .openapi('InboxAssignment');
const AvailabilitySchema = z
  .object({
    person_id: z.string(),
    availability: z.enum(['auto', 'available', 'away']),
    online: z.boolean().openapi({ description: 'a live panel connection now' }),
    available: z.boolean().openapi({ description: 'whether auto-assignment may give this member conversations now' }),
  })
  .openapi('Availability');

const params = z.object({ inboxId: idParam('inboxId', 'inb_01hxyz') });

export function registerAssignmentRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/inboxes/{inboxId}/assignment',
      tags: ['inboxes'],
      summary: 'The inbox’s auto-assignment (off unless set)',
      security: bearer,
      request: { params },
      responses: { 200: jsonAnswer(AssignmentSchema, 'the setting') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      const inbox = await resolveInbox(ctx, access.workspaceId, c.req.valid('param').inboxId);
      requireInbox(access, inbox.id);
      return c.json(await getInboxAssignment(ctx, inbox), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/v1/inboxes/{inboxId}/assignment',
      tags: ['inboxes'],
      summary: 'Set the inbox’s auto-assignment (owners and admins)',
      description:
        'New conversations and reopened unassigned ones are assigned in the transaction that records them, to an available member (online in the panel, or set available) under the capacity: round robin, or the least busy (ties in turn).',
      security: bearer,
      request: { params, body: jsonBody(AssignmentBody) },
      responses: { 200: jsonAnswer(AssignmentSchema, 'the setting as saved') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'inboxes:manage');
      const inbox = await resolveInbox(ctx, access.workspaceId, c.req.valid('param').inboxId);
      return c.json(await setInboxAssignment(ctx, access, inbox, c.req.valid('json')), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/me/availability',
      tags: ['me'],
      summary: 'Whether auto-assignment gives you conversations in this workspace',
      security: bearer,
      responses: { 200: jsonAnswer(AvailabilitySchema, 'your availability') },
    }),
    async (c) => c.json(await myAvailability(ctx, await requireAccess(c, ctx)), 200),
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/v1/me/availability',
      tags: ['me'],
      summary: 'Set yourself away, available, or auto (available while online in the panel)',
      security: bearer,
      request: { body: jsonBody(z.object({ availability: z.enum(['auto', 'available', 'away']) }).strict()) },
      responses: { 200: jsonAnswer(AvailabilitySchema, 'your availability now') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      if (access.actor.kind !== 'member') throw forbidden('availability belongs to a signed-in member, not to an API key');
      return c.json(await setMyAvailability(ctx, access, c.req.valid('json').availability), 200);
    },
  );
}
