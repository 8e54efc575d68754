// Segments: saved contact filters (GET/POST/PATCH/DELETE /v1/segments); a broadcast may name one
// as its audience (segment_id).
import { createRoute, z } from '@hono/zod-openapi';
import { authorize } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody, textUpTo } from '../http/openapi.js';
import { countSegment, createSegment, deleteSegment, formatSegment, getSegmentFor, listSegments, SegmentFilterSchema, updateSegment } from './segments.js';

const FilterOut = z
  .object({
    q: z.string().optional(),
    email: z.string().optional(),
    inbox_id: z.string().optional(),
    external_id: z.string().optional(),
    has_open: z.boolean().optional(),
    created_after: z.string().optional(),
    created_before: z.string().optional(),
  })
  .openapi('SegmentFilter', { description: 'the contacts list’s filters (GET /v1/contacts query parameters; has_open a boolean)' });

const SegmentSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    filter: FilterOut,
    contacts: z.number().int().optional().openapi({ description: 'how many contacts it finds now (GET of one segment)' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Segment');

const segmentParams = z.object({ segmentId: idParam('segmentId', 'seg_01hxyz') });

export function registerSegmentRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/segments',
      tags: ['contacts'],
      summary: 'The workspace’s segments (saved contact filters), by name',
      security: bearer,
      responses: { 200: jsonAnswer(z.object({ data: z.array(SegmentSchema), next_cursor: z.null() }), 'every segment') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'contacts:read');
      return c.json({ data: (await listSegments(ctx, access)).map((r) => formatSegment(r)), next_cursor: null }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/segments',
      tags: ['contacts'],
      summary: 'Save a contact filter as a segment',
      security: bearer,
      request: { body: jsonBody(z.object({ name: textUpTo(100, 1), filter: SegmentFilterSchema }).strict()) },
      responses: { 201: jsonAnswer(SegmentSchema, 'the segment') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'contacts:write');
      const b = c.req.valid('json');
      const row = await createSegment(ctx, access, { name: b.name, filter: b.filter });
      return c.json(formatSegment(row, await countSegment(ctx, access, row)), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/segments/{segmentId}',
      tags: ['contacts'],
      summary: 'One segment with how many contacts it finds now',
      security: bearer,
      request: { params: segmentParams },
      responses: { 200: jsonAnswer(SegmentSchema, 'the segment') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'contacts:read');
      const row = await getSegmentFor(ctx, access, c.req.valid('param').segmentId);
      return c.json(formatSegment(row, await countSegment(ctx, access, row)), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/segments/{segmentId}',
      tags: ['contacts'],
      summary: 'Rename a segment or replace its filter',
      security: bearer,
      request: { params: segmentParams, body: jsonBody(z.object({ name: textUpTo(100, 1).optional(), filter: SegmentFilterSchema.optional() }).strict()) },
      responses: { 200: jsonAnswer(SegmentSchema, 'the segment') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'contacts:write');
      const b = c.req.valid('json');
      const row = await updateSegment(ctx, access, c.req.valid('param').segmentId, { name: b.name, filter: b.filter });
      return c.json(formatSegment(row, await countSegment(ctx, access, row)), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/segments/{segmentId}',
      tags: ['contacts'],
      summary: 'Delete a segment (409 segment_in_use while a broadcast waits to take its recipients from it)',
      security: bearer,
      request: { params: segmentParams },
      responses: { 200: jsonAnswer(z.object({ id: z.string(), deleted: z.literal(true) }), 'deleted') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'contacts:write');
      const id = c.req.valid('param').segmentId;
      await deleteSegment(ctx, access, id);
      return c.json({ id, deleted: true as const }, 200);
    },
  );
}
