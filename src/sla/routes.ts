// GET/PUT /v1/inboxes/{inboxId}/sla: the inbox's SLA policy (issue 35).
import { createRoute, z } from '@hono/zod-openapi';
import { authorize, requireInbox } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody } from '../http/openapi.js';
import { resolveInbox } from '../inboxes/service.js';
import { getSlaPolicy, MAX_TARGET_MINUTES, type SlaPolicyBody, setSlaPolicy } from './policy.js';

const minutes = (what: string) =>
  z
    .number()
    .nullable()
    .optional()
    .openapi({ description: `${what}, in whole minutes of the inbox’s business hours (1–${MAX_TARGET_MINUTES}); null or left out: not tracked` });
const Targets = z
  .object({
    first_response_minutes: minutes('from the customer’s first message to the first reply'),
    next_response_minutes: minutes('from each later customer message to the next reply (time waiting on the customer never counts)'),
    resolution_minutes: minutes('from the customer’s first message to the close (time pending or snoozed never counts)'),
  })
  .strict()
  .openapi('SlaTargets');
const ShownTargets = z
  .object({
    first_response_minutes: z.number().int().nullable(),
    next_response_minutes: z.number().int().nullable(),
    resolution_minutes: z.number().int().nullable(),
  })
  .openapi('SlaTargetsShown');
const Priority = z.enum(['low', 'medium', 'high', 'urgent']);

const PolicyBody = z
  .object({
    default: Targets.nullable().openapi({ description: 'the targets of every conversation of the inbox; null: no SLA' }),
    by_priority: z
      .record(z.string(), Targets.nullable())
      .optional()
      .openapi({ description: 'targets for conversations of one priority (low, medium, high, urgent) instead of the default' }),
  })
  .strict()
  .openapi('SlaPolicyPut');

const PolicySchema = z
  .object({
    inbox_id: z.string(),
    default: ShownTargets.nullable(),
    by_priority: z.partialRecord(Priority, ShownTargets),
    updated_at: z.string().nullable(),
  })
  .openapi('SlaPolicy');

const params = z.object({ inboxId: idParam('inboxId', 'inb_01hxyz') });

export function registerSlaRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/inboxes/{inboxId}/sla',
      tags: ['inboxes'],
      summary: 'The inbox’s SLA policy (targets counted in its business hours)',
      security: bearer,
      request: { params },
      responses: { 200: jsonAnswer(PolicySchema, 'the policy; default null when the inbox has no SLA') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      const inbox = await resolveInbox(ctx, access.workspaceId, c.req.valid('param').inboxId);
      requireInbox(access, inbox.id);
      return c.json(await getSlaPolicy(ctx, inbox), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/v1/inboxes/{inboxId}/sla',
      tags: ['inboxes'],
      summary: 'Replace the inbox’s SLA policy',
      description:
        'Targets apply to conversations whose customer writes from now on, and to running targets at their conversation’s next change. Every problem is named in `issues` by its field (a negative or fractional target, an unknown priority).',
      security: bearer,
      request: { params, body: jsonBody(PolicyBody) },
      responses: { 200: jsonAnswer(PolicySchema, 'the policy as saved') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'inboxes:manage');
      const inbox = await resolveInbox(ctx, access.workspaceId, c.req.valid('param').inboxId);
      requireInbox(access, inbox.id);
      return c.json(await setSlaPolicy(ctx, inbox, c.req.valid('json') as SlaPolicyBody), 200);
    },
  );
}
