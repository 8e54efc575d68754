// Contacts as CSV: the export of the list's current filters, and the import (upload with a
// preview, a column mapping, then a stored job whose progress is read back).
import { Readable } from 'node:stream';
import { createRoute, z } from '@hono/zod-openapi';
import { authorize } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp, BodyLimitRule } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { csvAnswer, csvDownload } from '../http/files.js';
import { bearer, idParam, jsonAnswer, jsonBody } from '../http/openapi.js';
import { csvFilename } from '../platform/csv.js';
import { invalid } from '../platform/errors.js';
import { MAX_COLUMNS, MAX_IMPORT_BYTES } from './csv-file.js';
import { exportContactsCsv, MAX_EXPORT_ROWS } from './export.js';
import { ContactImportSchema, formatImport } from './import-format.js';
import { ColumnMappingSchema } from './import-rows.js';
import { getImportFor, importSample, listImports, startImport, uploadImport } from './imports.js';

export const contactImportBodyLimits: BodyLimitRule[] = [{ method: 'POST', path: /^\/v1\/contacts\/import$/, maxBytes: () => MAX_IMPORT_BYTES }];

const importParams = z.object({ importId: idParam('importId', 'imp_01hxyz') });

export function registerContactCsvRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/contacts/export.csv',
      tags: ['contacts'],
      summary: 'The contacts the list’s filters find, as CSV (id, name, emails, external_id:<inbox>…, attr:<key>…, created_at)',
      description: `The same filters as GET /v1/contacts; at most ${MAX_EXPORT_ROWS} contacts. Cells a spreadsheet would run as a formula (= + - @ tab CR at the start) get an apostrophe in front; the import takes it off again.`,
      security: bearer,
      request: {
        query: z.object({
          email: z.string().max(254).optional(),
          inbox_id: z.string().max(100).optional(),
          external_id: z.string().max(255).optional(),
          q: z.string().max(200).optional(),
          has_open: z.enum(['true', 'false']).optional(),
          created_after: z.string().max(40).optional(),
          created_before: z.string().max(40).optional(),
        }),
      },
      responses: { 200: csvDownload },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'contacts:read');
      const q = c.req.valid('query');
      const text = await exportContactsCsv(ctx, access, {
        email: q.email,
        inboxId: q.inbox_id,
        externalId: q.external_id,
        query: q.q,
        hasOpen: q.has_open === undefined ? undefined : q.has_open === 'true',
        createdAfter: q.created_after,
        createdBefore: q.created_before,
      });
      return csvAnswer(c, text, csvFilename(`contacts-${ctx.clock.now().toISOString().slice(0, 10)}`));
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/contacts/import',
      tags: ['contacts'],
      summary: 'Upload a CSV of contacts (raw request body): answers a preview to choose the column mapping from',
      description: `At most ${MAX_IMPORT_BYTES} bytes (10 MB; more: 413 too_large). UTF-8 (a byte-order mark is fine) or UTF-16 with a byte-order mark; comma, semicolon or tab separated; the first row names the columns (at most ${MAX_COLUMNS}). A file that is not one is refused with 400 invalid_request and a reason: empty, binary, encoding, malformed or too_many_columns. Nothing is imported until POST /v1/contact-imports/{importId}/start. Needs a credential that reaches every inbox.`,
      security: bearer,
      request: {
        query: z.object({ filename: z.string().max(255).optional() }),
        body: { content: { 'text/csv': { schema: z.string().openapi({ format: 'binary' }) } }, required: true },
      },
      responses: { 201: jsonAnswer(ContactImportSchema, 'the uploaded file: columns, the first rows and a suggested mapping') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'contacts:write');
      const body = c.req.raw.body;
      if (!body) throw invalid('the request has no body: send the CSV file as it is', { reason: 'empty' });
      const out = await uploadImport(ctx, access, { data: Readable.fromWeb(body as never), filename: c.req.valid('query').filename });
      return c.json(formatImport(out.row, { sample: out.sample, suggested: out.suggested }), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/contact-imports',
      tags: ['contacts'],
      summary: 'The workspace’s recent contact imports, newest first (the last 50)',
      security: bearer,
      responses: { 200: jsonAnswer(z.object({ data: z.array(ContactImportSchema), next_cursor: z.null() }), 'recent imports') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'contacts:write');
      const rows = await listImports(ctx, access, 50);
      return c.json({ data: rows.map((r) => formatImport(r)), next_cursor: null }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/contact-imports/{importId}',
      tags: ['contacts'],
      summary: 'An import: its state, progress (rows done of total, created, updated) and per-row errors',
      security: bearer,
      request: { params: importParams },
      responses: { 200: jsonAnswer(ContactImportSchema, 'the import') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'contacts:write');
      const row = await getImportFor(ctx, access, c.req.valid('param').importId);
      return c.json(formatImport(row, row.state === 'uploaded' ? { sample: await importSample(ctx, row) } : {}), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/contact-imports/{importId}/start',
      tags: ['contacts'],
      summary: 'Start an uploaded import with a column mapping (one entry per column, in order)',
      description:
        'Each column goes to the name, e-mail (one or more addresses separated by spaces, commas or semicolons), an external id of an inbox, an attribute, or is ignored. At least one column must be an e-mail or an external id: rows find their contact by them (updated, never a second one) or create it. 409 import_state when it was started already.',
      security: bearer,
      request: {
        params: importParams,
        body: jsonBody(z.object({ mapping: z.array(ColumnMappingSchema).min(1).max(MAX_COLUMNS) }).strict()),
      },
      responses: { 200: jsonAnswer(ContactImportSchema, 'the queued import') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'contacts:write');
      const id = c.req.valid('param').importId;
      const row = await startImport(ctx, access, id, c.req.valid('json').mapping);
      return c.json(formatImport(row), 200);
    },
  );
}
