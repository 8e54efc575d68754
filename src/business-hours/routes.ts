// GET/PUT /v1/inboxes/{inboxId}/hours: the inbox's business hours (issue 35).
import { createRoute, z } from '@hono/zod-openapi';
import { authorize, requireInbox } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody } from '../http/openapi.js';
import { resolveInbox } from '../inboxes/service.js';
import { getHours, type HoursInput, MAX_EXCEPTIONS, MAX_INTERVALS_PER_DAY, setHours } from './service.js';

const Interval = z
  .object({
    start: z.string().max(5).openapi({ example: '09:00', description: 'HH:MM on the inbox’s wall clock, 00:00–23:59' }),
    end: z.string().max(5).openapi({ example: '17:00', description: 'HH:MM after start, up to 24:00' }),
  })
  .strict()
  .openapi('BusinessHoursInterval');
const Intervals = z.array(Interval).max(MAX_INTERVALS_PER_DAY);
const Weekly = z.object({ mon: Intervals, tue: Intervals, wed: Intervals, thu: Intervals, fri: Intervals, sat: Intervals, sun: Intervals }).partial().strict();
const Exception = z
  .object({
    date: z.string().max(10).openapi({ example: '2026-12-24', description: 'a date of the inbox’s calendar' }),
    intervals: Intervals.openapi({ description: 'the day’s hours instead of the weekday’s; empty: closed all day' }),
  })
  .strict();

const HoursBody = z
  .object({
    weekly: Weekly.nullable().openapi({
      description: 'intervals per weekday (several a day, no overlaps), on the inbox’s wall clock; a day left out is closed; null: no schedule, always open',
    }),
    exceptions: z.array(Exception).max(MAX_EXCEPTIONS).default([]).openapi({ description: 'holidays and early closings' }),
  })
  .strict()
  .openapi('BusinessHoursPut');

const HoursSchema = z
  .object({
    inbox_id: z.string(),
    timezone: z.string().openapi({ description: 'the inbox’s time zone (PATCH /v1/inboxes/{id} changes it)' }),
    weekly: Weekly.nullable(),
    exceptions: z.array(Exception),
    open_now: z.boolean(),
    next_opening: z.string().nullable().openapi({ description: 'now when open; null when the schedule never opens' }),
    updated_at: z.string().nullable(),
  })
  .openapi('BusinessHours');

const params = z.object({ inboxId: idParam('inboxId', 'inb_01hxyz') });

export function registerBusinessHoursRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/inboxes/{inboxId}/hours',
      tags: ['inboxes'],
      summary: 'The inbox’s business hours (without a schedule the inbox is always open)',
      security: bearer,
      request: { params },
      responses: { 200: jsonAnswer(HoursSchema, 'the hours, whether the inbox is open now and when it opens next') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      const inbox = await resolveInbox(ctx, access.workspaceId, c.req.valid('param').inboxId);
      requireInbox(access, inbox.id);
      return c.json(await getHours(ctx, inbox), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/v1/inboxes/{inboxId}/hours',
      tags: ['inboxes'],
      summary: 'Replace the inbox’s weekly schedule and dated exceptions',
      description:
        'Every problem is named in `issues` by its field (a time that is not HH:MM, an end before its start, overlapping intervals, a date given twice).',
      security: bearer,
      request: { params, body: jsonBody(HoursBody) },
      responses: { 200: jsonAnswer(HoursSchema, 'the hours as saved') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'inboxes:manage');
      const inbox = await resolveInbox(ctx, access.workspaceId, c.req.valid('param').inboxId);
      requireInbox(access, inbox.id);
      return c.json(await setHours(ctx, inbox, c.req.valid('json') as HoursInput), 200);
    },
  );
}
