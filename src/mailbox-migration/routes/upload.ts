// Export-file upload endpoints of a migration (spec: Migration endpoints, upload rows). The same
// callers as every migration endpoint: owners, admins and API keys with migrations:manage and no
// inbox limit.
import { Readable } from 'node:stream';
import { createRoute, z } from '@hono/zod-openapi';
import type { Ctx } from '../../context.js';
import type { ApiApp, BodyLimitRule } from '../../http/app.js';
import { bearer, jsonAnswer, optionalJsonBody } from '../../http/openapi.js';
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

const ProcessingSchema = z
  .object({
    state: z.enum(['processing', 'read', 'failed']),
    phase: z
      .enum(['verifying', 'reading'])
      .nullable()
      .openapi({ description: "verifying: the whole file's SHA-256 over the parts; reading: splitting it into messages (null once ended)" }),
    done_bytes: z.number().int().openapi({ description: 'bytes done in this phase (reading: uncompressed bytes of the mail in the file)' }),
    total_bytes: z.number().int(),
    percent: z.number().int(),
    messages: z.number().int().openapi({ description: 'messages found so far (all of them once read)' }),
    started_at: z.string(),
    finished_at: z.string().nullable(),
    error: z
      .object({ code: z.literal('invalid_request'), reason: z.string(), message: z.string() })
      .nullable()
      .openapi({
        description:
          'why the file was refused (state failed): reason is sha256_mismatch, not_an_export, damaged, unsafe_name, too_many_entries, too_large, compression_ratio, encrypted, unsupported, empty or unreadable. Nothing of the file is kept (after sha256_mismatch the parts stay, to send the wrong ones again)',
      }),
  })
  .openapi('MigrationUploadProcessing');

const UploadSchema = z
  .object({
    state: z.enum(['receiving', 'processing', 'read', 'failed']).openapi({
      description: 'receiving parts; processing after complete (see processing); read (the migration is connected); failed (see processing.error)',
    }),
    data: z.array(PartSchema).openapi({ description: 'the parts the server holds, in order' }),
    next_cursor: z.null(),
    total_bytes: z.number().int(),
    missing_parts: z.array(z.number().int()).openapi({ description: 'part numbers below the highest held one that are not held' }),
    max_part_bytes: z.number().int(),
    sha256_header: z.string(),
    completing: z.boolean().openapi({ description: 'the same as state processing' }),
    processing: ProcessingSchema.nullable().openapi({ description: 'the processing after complete: phase, progress and outcome' }),
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
      summary: 'Finish the upload: the file is checked and read in the background, then the migration becomes connected',
      description:
        'Every part 1…n must be held (else 409 with `missing_parts`). Optional `parts` (how many parts the file has) and `sha256` (of the whole file) are checked when given. ' +
        'The answer (202) comes at once with the upload processing: the whole file is verified, then read into messages; GET …/upload shows the phase and progress ' +
        '(also sent as migration.progress events), and the migration becomes connected once the file is read (migration.updated). A file that is not an export, or that is ' +
        'unsafe to read (zip bomb, entry names with .., absolute paths or backslashes, damaged or truncated zip, too many entries), or whose SHA-256 is not `sha256`, ends ' +
        'with the upload failed and `processing.error` giving the `reason`; nothing of it is kept and the migration stays a draft. Asked again while processing with the same ' +
        'input, the answer is the same upload.',
      security: bearer,
      request: {
        params,
        body: optionalJsonBody(
          z
            .object({
              parts: z.number().int().min(1).max(MAX_PARTS).optional(),
              sha256: z.string().max(64).optional().openapi({ description: 'SHA-256 of the whole file, 64 hex digits' }),
            })
            .strict(),
        ),
      },
      responses: {
        202: jsonAnswer(
          z.object({ migration: MigrationSchema, upload: UploadSchema }),
          'the upload is being processed: the migration (still a draft) and the upload',
        ),
        409: { description: 'parts missing, nothing uploaded, or the migration is not a draft' },
      },
    }),
    async (c) => {
      const access = await manager(c);
      const body = (c.req.valid('json') ?? {}) as { parts?: number; sha256?: string };
      return c.json(await completeUpload(ctx, access, c.req.valid('param').migrationId, body), 202);
    },
  );
}
