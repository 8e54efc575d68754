// Export-file upload endpoints of a migration (spec: Migration endpoints, upload rows). The same
// callers as every migration endpoint: owners, admins and API keys with migrations:manage and no
// inbox limit.
import { Readable } from 'node:stream';
import { createRoute, z } from '@hono/zod-openapi';
import type { Ctx } from '../../context.js';
import type { ApiApp, BodyLimitRule } from '../../http/app.js';
import { bearer, jsonAnswer } from '../../http/openapi.js';
import { invalid } from '../../platform/errors.js';
import { completeUpload, getUpload, MAX_PART_BYTES, MAX_PARTS, PART_SHA256_HEADER, putPart } from '../upload/service.js';
import { migrationManager, params, tags } from './common.js';
import { MigrationSchema } from './migrations.js';

export const uploadBodyLimits: BodyLimitRule[] = [{ method: 'POST', path: /^\/v1\/migrations\/[^/]+\/upload\/parts\/[^/]+$/, maxBytes: () => MAX_PART_BYTES }];

const partParams = params.extend({
  part: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PARTS)
    .openapi({ param: { name: 'part', in: 'path' }, example: 1, description: `part number, 1 to ${MAX_PARTS}, in file order` }),
});

const PartSchema = z.object({ part: z.number().int(), size: z.number().int(), sha256: z.string() }).openapi('UploadPart');

const FileSchema = z
  .object({
    kind: z.enum(['zip', 'mbox']),
    contents: z.array(z.enum(['mbox', 'eml', 'maildir'])),
    bytes: z.number().int(),
    sha256: z.string(),
    messages: z.number().int(),
    oversize_messages: z
      .number()
      .int()
      .openapi({ description: 'messages over SVC_MIGRATION_MAX_MESSAGE_BYTES: only their headers were kept; the plan skips them' }),
    folders: z.array(z.object({ path: z.string(), special_use: z.string().nullable(), messages: z.number().int() })),
    ignored: z
      .array(z.object({ name: z.string(), reason: z.enum(['nested_archive', 'not_mail']) }))
      .openapi({ description: 'entries that were not read (first 100): nested archives are never opened' }),
    ignored_count: z.number().int(),
    read_at: z.string(),
  })
  .openapi('MigrationExportFile');

const UploadSchema = z
  .object({
    data: z.array(PartSchema).openapi({ description: 'the parts the server holds, in order' }),
    next_cursor: z.null(),
    total_bytes: z.number().int(),
    missing_parts: z.array(z.number().int()).openapi({ description: 'part numbers below the highest held one that are not held' }),
    max_part_bytes: z.number().int(),
    sha256_header: z.string(),
    completing: z.boolean(),
    file: FileSchema.nullable().openapi({ description: 'what was read from the file once the upload was completed' }),
  })
  .openapi('MigrationUpload');

export function registerMigrationUploadRoutes(app: ApiApp, ctx: Ctx) {
  const manager = migrationManager(ctx);

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/migrations/{migrationId}/upload',
      tags,
      summary: 'Parts of the export file the server already has, to resume a cut upload',
      security: bearer,
      request: { params },
      responses: { 200: jsonAnswer(UploadSchema, 'the parts held, and the file once read') },
    }),
    async (c) => {
      const access = await manager(c);
      return c.json(await getUpload(ctx, access, c.req.valid('param').migrationId), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/migrations/{migrationId}/upload/parts/{part}',
      tags,
      summary: `Upload one part of the export file (raw body, at most 8 MiB) with its SHA-256 in ${PART_SHA256_HEADER}`,
      description:
        `The export file (a zip of mbox files, .eml files or a Maildir tree, or a bare mbox) is cut into parts of at most ${MAX_PART_BYTES} bytes, numbered from 1 in file order. ` +
        `Each part carries the SHA-256 of its bytes as 64 hex digits in the ${PART_SHA256_HEADER} header; a part whose bytes do not match, or that is larger, is refused and nothing of it is kept. ` +
        'Sending a part number again replaces that part. GET …/upload lists the parts held, so a cut upload resumes with the missing ones.',
      security: bearer,
      request: {
        params: partParams,
        headers: z.object({ [PART_SHA256_HEADER.toLowerCase()]: z.string().optional().openapi({ description: 'SHA-256 of the part, 64 hex digits' }) }),
        body: { content: { 'application/octet-stream': { schema: z.string().openapi({ format: 'binary' }) } }, required: true },
      },
      responses: {
        200: jsonAnswer(PartSchema, 'the part is held'),
        400: { description: 'checksum missing or not matching (nothing kept)' },
        413: { description: 'part larger than 8 MiB (nothing kept)' },
      },
    }),
    async (c) => {
      const access = await manager(c);
      const p = c.req.valid('param');
      const body = c.req.raw.body;
      if (!body) throw invalid('the request has no body');
      const length = c.req.header('content-length');
      const held = await putPart(ctx, access, p.migrationId, {
        part: p.part,
        sha256: c.req.header(PART_SHA256_HEADER),
        contentLength: length === undefined ? undefined : Number(length),
        data: Readable.fromWeb(body as never),
      });
      return c.json(held, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/migrations/{migrationId}/upload/complete',
      tags,
      summary: 'Finish the upload: the parts are assembled, the file is read, and the migration becomes connected',
      description:
        'Optional `parts` (how many parts the file has) and `sha256` (of the whole file) are checked when given. A file that is not an export, or that is unsafe to read ' +
        '(zip bomb, entry names with .., absolute paths or backslashes, damaged or truncated zip, too many entries), is refused with 400 and a `reason`; nothing of it is kept.',
      security: bearer,
      request: {
        params,
        body: {
          content: {
            'application/json': {
              schema: z.object({ parts: z.number().int().min(1).max(MAX_PARTS).optional(), sha256: z.string().max(64).optional() }).strict(),
            },
          },
          required: false,
        },
      },
      responses: { 200: jsonAnswer(z.object({ migration: MigrationSchema, file: FileSchema }), 'the connected migration and what was read from the file') },
    }),
    async (c) => {
      const access = await manager(c);
      const text = await c.req.text();
      let input: { parts?: number; sha256?: string } = {};
      if (text.trim()) {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          throw invalid('the body is not JSON');
        }
        const parsed = z
          .object({ parts: z.number().int().min(1).max(MAX_PARTS).optional(), sha256: z.string().max(64).optional() })
          .strict()
          .safeParse(json);
        if (!parsed.success) throw invalid('the body has optional parts (integer) and sha256 (64 hex digits) only');
        input = parsed.data;
      }
      return c.json(await completeUpload(ctx, access, c.req.valid('param').migrationId, input), 200);
    },
  );
}
