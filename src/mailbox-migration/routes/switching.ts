// Migration endpoints of switching delivery, finishing and removing history: probe, finish and
// remove-history (registered by routes.ts with the other migration endpoints).
import { createRoute, z } from '@hono/zod-openapi';
import type { Ctx } from '../../context.js';
import type { ApiApp } from '../../http/app.js';
import { bearer, jsonAnswer, jsonBody, optionalJsonBody } from '../../http/openapi.js';
import { removeHistory } from '../removal.js';
import { act } from '../service.js';
import { setKeepReading } from '../switching/handover.js';
import { finishMigration, sendProbe } from '../switching/service.js';
import { migrationManager, params, tags } from './common.js';

export function registerMigrationSwitchingRoutes(app: ApiApp, ctx: Ctx, MigrationSchema: z.ZodType) {
  const manager = migrationManager(ctx);

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/migrations/{migrationId}/probe',
      tags,
      summary:
        'Mail the old mailbox a test message from the server’s own account; when it reaches the server by the new route the migration records whether it came by forwarding or directly (rate limited, 429)',
      security: bearer,
      request: { params },
      responses: {
        202: jsonAnswer(MigrationSchema, 'the migration; test_message.sent_at is set'),
        429: { description: 'rate_limited: too many test messages' },
      },
    }),
    async (c) => {
      const access = await manager(c);
      return c.json((await sendProbe(ctx, access, c.req.valid('param').migrationId, act)) as object, 202);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/migrations/{migrationId}/finish',
      tags,
      summary:
        'Finish a syncing migration now; refused (409 migration_state) before a test message arrived unless force is true. The password is deleted, or moved to the channel’s reader with keep_reading.',
      security: bearer,
      request: {
        params,
        body: optionalJsonBody(
          z
            .object({
              force: z
                .boolean()
                .optional()
                .openapi({ description: 'finish without a test message; mail that still reaches only the old mailbox is then not copied' }),
              keep_reading: z
                .boolean()
                .optional()
                .openapi({ description: 'keep reading the mailbox live as the channel (saved with the completion; default: the migration’s choice)' }),
            })
            .strict(),
        ),
      },
      responses: { 200: jsonAnswer(MigrationSchema, 'the completed migration') },
    }),
    async (c) => {
      const access = await manager(c);
      const body = (c.req.valid('json') ?? {}) as { force?: boolean; keep_reading?: boolean };
      return c.json((await finishMigration(ctx, access, c.req.valid('param').migrationId, body, act)) as object, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/v1/migrations/{migrationId}/keep-reading',
      tags,
      summary:
        'Choose whether the channel keeps reading the mailbox live once the migration completes (finish, quiet period or sync limit; not cancel): the password or sign-in moves to the channel’s reader, no second sign-in. 409 keep_reading_not_possible without an e-mail channel or for export files and help desks.',
      security: bearer,
      request: { params, body: jsonBody(z.object({ keep_reading: z.boolean() }).strict()) },
      responses: { 200: jsonAnswer(MigrationSchema, 'the migration with keep_reading') },
    }),
    async (c) => {
      const access = await manager(c);
      return c.json((await setKeepReading(ctx, access, c.req.valid('param').migrationId, c.req.valid('json'), act)) as object, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/migrations/{migrationId}/remove-history',
      tags,
      summary:
        'Remove imported history (completed or cancelled migrations): confirm_count must equal remove_history.confirm_count (else 409 confirm_count_mismatch); the migration is removing, then removed',
      security: bearer,
      request: { params, body: jsonBody(z.object({ confirm_count: z.number().int().min(0) }).strict()) },
      responses: { 202: jsonAnswer(MigrationSchema, 'the migration, removing') },
    }),
    async (c) => {
      const access = await manager(c);
      return c.json((await removeHistory(ctx, access, c.req.valid('param').migrationId, c.req.valid('json'), act)) as object, 202);
    },
  );
}
