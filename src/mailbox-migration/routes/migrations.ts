// Migration endpoints (spec: Endpoints › Migration endpoints). Owners, admins and API keys with
// migrations:manage and no inbox limit; agents and other keys get 403.
import { createRoute, z } from '@hono/zod-openapi';
import type { Ctx } from '../../context.js';
import type { ApiApp } from '../../http/app.js';
import { bearer, jsonAnswer, jsonBody, noContent } from '../../http/openapi.js';
import { listQuery, pageSchema } from '../../http/pagination.js';
import {
  cancelMigration,
  createMigration,
  deleteMigration,
  detect,
  getMigrationView,
  listActivity,
  listErrors,
  listFolders,
  listMigrations,
  listPresets,
  pauseCopy,
  previewMigration,
  resumeCopy,
  retryFailed,
  startCopy,
  startScan,
  testConnection,
  updateMigration,
} from '../service.js';
import { putCredentials } from '../sign-ins.js';
import { MIGRATION_STATES } from '../states.js';
import { CredentialsSchema, migrationManager, params, TestResultSchema, tags } from './common.js';
import { registerCredentialLinkRoutes } from './credential-links.js';
import { registerSignInRoutes } from './sign-in.js';
import { registerMigrationSwitchingRoutes } from './switching.js';

const TLS = z.enum(['tls', 'starttls', 'none']);

export const MigrationSchema = z
  .object({
    id: z.string(),
    state: z.enum(MIGRATION_STATES as [string, ...string[]]),
    allowed_actions: z.array(z.string()).openapi({ description: 'what may be done now; anything else answers 409 migration_state' }),
    provider: z.string(),
    provider_name: z.string(),
    source_address: z.string().nullable(),
    imap: z.object({ host: z.string(), port: z.number().int(), tls: TLS }).nullable(),
    username: z.string().nullable(),
    credentials: z.object({ set: z.boolean(), set_at: z.string().nullable() }).openapi({ description: 'the password itself is never shown' }),
    inbox_id: z.string().nullable(),
    channel_id: z.string().nullable(),
    folders: z.array(z.string()).nullable(),
    date_from: z.string().nullable(),
    date_to: z.string().nullable(),
    folder_labels: z.record(z.string(), z.string().nullable()),
    team_members: z.record(z.string(), z.string().nullable()),
    close_after_days: z.number().int(),
    skip_automatic: z.boolean(),
    keep_originals: z.boolean(),
    plan: z
      .object({ current: z.boolean(), summary: z.record(z.string(), z.unknown()).nullable() })
      .openapi({ description: 'the dry run: counts per folder, skipped items with reasons, contacts, labels, estimates' }),
    progress: z.object({
      total: z.number().int(),
      planned: z.number().int(),
      copied: z.number().int(),
      skipped: z.number().int(),
      duplicates: z.number().int(),
      failed: z.number().int(),
      conversations: z.number().int(),
      copied_bytes: z.number().int(),
      percent: z.number().int(),
    }),
    read_only: z.object({ changes_made_to_provider: z.literal(0), blocked_commands: z.number().int(), statement: z.string() }),
    attention: z.object({ reason: z.string().nullable(), message: z.string().nullable(), retry_at: z.string().nullable() }).nullable(),
    app_password: z.object({ deleted_here: z.boolean(), remove_at_provider: z.string().nullable(), message: z.string() }).nullable(),
    keep_reading: z
      .object({
        on: z.boolean(),
        possible: z.boolean(),
        not_possible_reason: z.enum(['not_a_mailbox', 'no_email_channel']).nullable(),
        channel_id: z.string().nullable(),
        channel_name: z.string().nullable(),
        channel_inbox_id: z.string().nullable(),
        channel_reads_a_mailbox: z.boolean().openapi({ description: 'the channel reads a mailbox already and keeps it: the hand-over would be skipped' }),
        result: z.string().nullable().openapi({ description: 'what the completion did: handed_over, or why it skipped (channel_reads_a_mailbox, …)' }),
      })
      .openapi({
        description:
          'keep reading the mailbox live as the channel after the move: the completion (not a cancel) moves the password or sign-in to the channel’s reader',
      }),
    copy_started_at: z.string().nullable(),
    copy_ended_at: z.string().nullable(),
    ended_at: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .passthrough()
  .openapi('Migration');

const MigrationBody = z
  .object({
    provider: z.string().max(50).optional().openapi({ description: 'a preset id; default: found from source_address (or "imap" with imap)' }),
    source_address: z.string().max(320).nullable().optional(),
    imap: z
      .object({ host: z.string().min(1).max(253), port: z.number().int().optional(), tls: TLS.optional() })
      .strict()
      .nullable()
      .optional(),
    username: z.string().max(320).nullable().optional(),
    inbox_id: z.string().max(100).nullable().optional(),
    channel_id: z.string().max(100).nullable().optional(),
    folders: z
      .array(z.string().max(1000))
      .max(1000)
      .nullable()
      .optional()
      .openapi({ description: 'folder paths; null: the inbox, sent mail and the provider’s defaults' }),
    date_from: z.string().max(10).nullable().optional().openapi({ description: 'YYYY-MM-DD' }),
    date_to: z.string().max(10).nullable().optional().openapi({ description: 'YYYY-MM-DD (the whole day)' }),
    folder_labels: z.record(z.string(), z.string().max(100).nullable()).optional().openapi({ description: 'folder → label (null: no label)' }),
    team_members: z
      .record(z.string(), z.string().max(100).nullable())
      .optional()
      .openapi({ description: 'team address → member id (null: shown by its original name and address)' }),
    close_after_days: z.number().int().optional().openapi({ description: 'imported conversations whose last message is older are closed (default 14)' }),
    skip_automatic: z.boolean().optional().openapi({ description: 'skip threads of only automatic mail (default true)' }),
    keep_originals: z.boolean().optional().openapi({ description: 'store the original of every message (default false)' }),
  })
  .strict();

const TestSchema = TestResultSchema.extend({ migration: MigrationSchema });

export function registerMigrationRoutes(app: ApiApp, ctx: Ctx) {
  const manager = migrationManager(ctx);
  const action = (path: string, summary: string, run: typeof startScan, status: 200 | 202 = 200) =>
    app.openapi(
      createRoute({
        method: 'post',
        path: `/v1/migrations/{migrationId}/${path}`,
        tags,
        summary,
        security: bearer,
        request: { params },
        responses: { [status]: jsonAnswer(MigrationSchema, 'the migration') },
      }),
      async (c) => {
        const access = await manager(c);
        return c.json(await run(ctx, access, c.req.valid('param').migrationId), status);
      },
    );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/migrations/presets',
      tags,
      summary: 'Providers this server offers, with servers, TLS, folders and whether an app password is needed',
      security: bearer,
      responses: { 200: jsonAnswer(z.object({ data: z.array(z.record(z.string(), z.unknown())) }), 'presets') },
    }),
    async (c) => {
      await manager(c);
      return c.json({ data: listPresets(ctx.config) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/migrations/detect',
      tags,
      summary: 'Find the provider of an address (its domain, else its MX records); nothing is read from the mailbox',
      security: bearer,
      request: { body: jsonBody(z.object({ address: z.string().min(3).max(320) }).strict()) },
      responses: { 200: jsonAnswer(z.record(z.string(), z.unknown()), 'the provider found') },
    }),
    async (c) => {
      await manager(c);
      return c.json(await detect(ctx, c.req.valid('json').address), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/migrations',
      tags,
      summary: 'Migrations, newest first',
      security: bearer,
      request: { query: listQuery },
      responses: { 200: jsonAnswer(pageSchema(MigrationSchema), 'migrations') },
    }),
    async (c) => {
      const access = await manager(c);
      return c.json(await listMigrations(ctx, access, c.req.valid('query')), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/migrations',
      tags,
      summary: 'Start a migration; the result is a draft',
      security: bearer,
      request: { body: jsonBody(MigrationBody) },
      responses: { 201: jsonAnswer(MigrationSchema, 'the draft') },
    }),
    async (c) => {
      const access = await manager(c);
      return c.json(await createMigration(ctx, access, c.req.valid('json')), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/migrations/{migrationId}',
      tags,
      summary: 'A migration with its allowed actions, plan and progress',
      security: bearer,
      request: { params },
      responses: { 200: jsonAnswer(MigrationSchema, 'the migration') },
    }),
    async (c) => {
      const access = await manager(c);
      return c.json(await getMigrationView(ctx, access, c.req.valid('param').migrationId), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/migrations/{migrationId}',
      tags,
      summary: 'Change the mailbox, inbox, channel and options; a change of a choice plans the copy again',
      security: bearer,
      request: { params, body: jsonBody(MigrationBody) },
      responses: { 200: jsonAnswer(MigrationSchema, 'the migration') },
    }),
    async (c) => {
      const access = await manager(c);
      return c.json(await updateMigration(ctx, access, c.req.valid('param').migrationId, c.req.valid('json')), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/migrations/{migrationId}',
      tags,
      summary: 'Delete a migration (imported conversations stay; see remove-history)',
      security: bearer,
      request: { params },
      responses: { 204: noContent('deleted') },
    }),
    async (c) => {
      const access = await manager(c);
      await deleteMigration(ctx, access, c.req.valid('param').migrationId);
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/v1/migrations/{migrationId}/credentials',
      tags,
      summary:
        'Connect with user name and (app) password, or a help desk’s API credentials (Zendesk: subdomain, email, api_token; Help Scout: app_id, app_secret, then tested at once); secrets are sealed at once and never shown again',
      description:
        'Sign-in providers (google, microsoft) take no password: the answer carries `sign_in.url`, the provider’s page to open in a browser (valid 15 minutes, single use); after the sign-in the provider returns to /v1/migration-sign-in/callback, which stores the grant sealed like a password. 409 provider_not_configured when the operator has not set the provider’s OAuth client.',
      security: bearer,
      request: { params, body: jsonBody(CredentialsSchema) },
      responses: { 200: jsonAnswer(MigrationSchema.extend({ test: TestResultSchema.optional() }), 'the migration (help desks: with the test)') },
    }),
    async (c) => {
      const access = await manager(c);
      return c.json(await putCredentials(ctx, access, c.req.valid('param').migrationId, c.req.valid('json')), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/migrations/{migrationId}/test',
      tags,
      summary: 'Test the connection (DNS, connect, TLS, login, list); says which step failed; rate limited (429)',
      security: bearer,
      request: { params },
      responses: { 200: jsonAnswer(TestSchema, 'the result of every step'), 429: { description: 'rate_limited: too many connection tests' } },
    }),
    async (c) => {
      const access = await manager(c);
      const { result, migration } = await testConnection(ctx, access, c.req.valid('param').migrationId);
      return c.json({ ...result, migration }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/migrations/{migrationId}/folders',
      tags,
      summary: 'The mailbox’s folders (read live), which are chosen, and which are never read (spam, trash, drafts)',
      security: bearer,
      request: { params },
      responses: { 200: jsonAnswer(z.object({ data: z.array(z.record(z.string(), z.unknown())) }), 'folders') },
    }),
    async (c) => {
      const access = await manager(c);
      return c.json(await listFolders(ctx, access, c.req.valid('param').migrationId), 200);
    },
  );

  action('scan', 'Read the headers of the chosen folders for the dry run (nothing is copied)', startScan, 202);

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/migrations/{migrationId}/preview',
      tags,
      summary: 'The newest conversations as they will look',
      security: bearer,
      request: { params, query: z.object({ limit: z.coerce.number().int().min(1).max(50).optional() }) },
      responses: { 200: jsonAnswer(z.object({ data: z.array(z.record(z.string(), z.unknown())) }), 'conversations') },
    }),
    async (c) => {
      const access = await manager(c);
      return c.json(await previewMigration(ctx, access, c.req.valid('param').migrationId, c.req.valid('query').limit), 200);
    },
  );

  action('start', 'Start copying, newest conversations first', startCopy, 202);
  action('pause', 'Pause the copy', pauseCopy);
  action('resume', 'Resume a paused copy, or continue after the cause of needs_attention was fixed', resumeCopy, 202);
  action('cancel', 'Cancel; the password is deleted', cancelMigration);
  action('retry', 'Copy the failed messages again', retryFailed, 202);

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/migrations/{migrationId}/errors',
      tags,
      summary: 'What went wrong: failed messages with their reason, why the migration needs attention, refused commands',
      security: bearer,
      request: { params, query: listQuery },
      responses: {
        200: jsonAnswer(z.object({ data: z.array(z.record(z.string(), z.unknown())), next_cursor: z.string().nullable() }).passthrough(), 'errors'),
      },
    }),
    async (c) => {
      const access = await manager(c);
      return c.json(await listErrors(ctx, access, c.req.valid('param').migrationId, c.req.valid('query')), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/migrations/{migrationId}/activity',
      tags,
      summary: 'The activity log, newest first (kept SVC_MIGRATION_AUDIT_DAYS after the migration ends)',
      security: bearer,
      request: { params, query: listQuery },
      responses: { 200: jsonAnswer(pageSchema(z.record(z.string(), z.unknown())), 'log entries') },
    }),
    async (c) => {
      const access = await manager(c);
      return c.json(await listActivity(ctx, access, c.req.valid('param').migrationId, c.req.valid('query')), 200);
    },
  );

  registerMigrationSwitchingRoutes(app, ctx, MigrationSchema);
  registerCredentialLinkRoutes(app, ctx);
  registerSignInRoutes(app, ctx);
}
