import { createRoute, z } from '@hono/zod-openapi';
import { authorize } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { csvAnswer, csvDownload } from '../http/files.js';
import { bearer, jsonAnswer } from '../http/openapi.js';
import { csvFilename } from '../platform/csv.js';
import { reportCsv, usageCsv } from './export.js';
import { ReportSchema, UsageSchema } from './format.js';
import { getReport, getUsage, REPORT_MAX_DAYS, USAGE_MAX_MONTHS } from './service.js';

export function registerReportRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/reports',
      tags: ['reports'],
      summary: 'Per-day figures of a period: conversations opened and closed, replies, first response and resolution times, ratings',
      description: `UTC days from..to inclusive (default the last 30 days, at most ${REPORT_MAX_DAYS}). Imported mail is left out. Limited to the inboxes the caller reaches.`,
      security: bearer,
      request: {
        query: z.object({
          from: z.string().max(10).optional().openapi({ example: '2026-11-01' }),
          to: z.string().max(10).optional().openapi({ example: '2026-11-30' }),
          inbox_id: z.string().max(100).optional(),
          member_id: z.string().max(100).optional(),
        }),
      },
      responses: { 200: jsonAnswer(ReportSchema, 'the report') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'reports:read');
      const q = c.req.valid('query');
      return c.json(await getReport(ctx, access, { from: q.from, to: q.to, inboxId: q.inbox_id, memberId: q.member_id }), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/usage',
      tags: ['reports'],
      summary: 'Per-month usage: conversations and messages billed vs imported, storage',
      description: `Months from..to inclusive (YYYY-MM, UTC; default the last 12, at most ${USAGE_MAX_MONTHS}).`,
      security: bearer,
      request: {
        query: z.object({
          from: z.string().max(7).optional().openapi({ example: '2026-01' }),
          to: z.string().max(7).optional().openapi({ example: '2026-11' }),
        }),
      },
      responses: { 200: jsonAnswer(UsageSchema, 'usage') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'usage:read');
      return c.json(await getUsage(ctx, access, c.req.valid('query')), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/reports/export.csv',
      tags: ['reports'],
      summary: 'The report’s per-day figures as CSV (the same query as GET /v1/reports), with a total row',
      security: bearer,
      request: {
        query: z.object({
          from: z.string().max(10).optional(),
          to: z.string().max(10).optional(),
          inbox_id: z.string().max(100).optional(),
          member_id: z.string().max(100).optional(),
        }),
      },
      responses: { 200: csvDownload },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'reports:read');
      const q = c.req.valid('query');
      const report = await getReport(ctx, access, { from: q.from, to: q.to, inboxId: q.inbox_id, memberId: q.member_id });
      return csvAnswer(c, reportCsv(report), csvFilename(`report-${report.from}-${report.to}`));
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/usage/export.csv',
      tags: ['reports'],
      summary: 'Usage per month as CSV (the same query as GET /v1/usage)',
      security: bearer,
      request: { query: z.object({ from: z.string().max(7).optional(), to: z.string().max(7).optional() }) },
      responses: { 200: csvDownload },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'usage:read');
      const usage = await getUsage(ctx, access, c.req.valid('query'));
      return csvAnswer(c, usageCsv(usage), csvFilename(`usage-${usage.from}-${usage.to}`));
    },
  );
}
