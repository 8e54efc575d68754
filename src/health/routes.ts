import { createRoute, z } from '@hono/zod-openapi';
import type { Ctx } from '../context.js';
import { pingDatabase } from '../db/connection.js';
import type { ApiApp } from '../http/app.js';
import { jsonAnswer } from '../http/openapi.js';
import { readVersion } from '../version.js';

const Status = z.object({ status: z.string() });

export function registerHealthRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/healthz',
      tags: ['health'],
      summary: 'Liveness; never touches the database',
      responses: { 200: jsonAnswer(Status, 'the process runs') },
    }),
    (c) => c.json({ status: 'ok' }, 200),
  );
  app.openapi(
    createRoute({
      method: 'get',
      path: '/readyz',
      tags: ['health'],
      summary: 'Readiness: 200 when the database answers, else 503',
      responses: { 200: jsonAnswer(Status, 'ready'), 503: jsonAnswer(Status, 'the database is unreachable') },
    }),
    async (c) => {
      if (await pingDatabase(ctx.db)) return c.json({ status: 'ok' }, 200);
      ctx.log.error('not ready', { reason: 'database unreachable' });
      return c.json({ status: 'unavailable' }, 503);
    },
  );
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/version',
      tags: ['health'],
      summary: 'The running version',
      responses: { 200: jsonAnswer(z.object({ version: z.string() }), 'version') },
    }),
    (c) => c.json({ version: readVersion() }, 200),
  );
}
