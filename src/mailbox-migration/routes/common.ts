// What every migration route file shares: the OpenAPI tag, the id parameter, who may act
// (owners, admins, and API keys with migrations:manage and no inbox limit), and the credentials
// body and connection-test answer (PUT …/credentials and the credentials link's PUT).
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { authorize } from '../../auth/access.js';
import type { Ctx } from '../../context.js';
import type { AppEnv } from '../../http/app.js';
import { requireAccess } from '../../http/auth.js';
import { idParam } from '../../http/openapi.js';

export const tags = ['migrations'];
export const params = z.object({ migrationId: idParam('migrationId', 'mig_01hxyz') });

export function migrationManager(ctx: Ctx) {
  return async (c: Context<AppEnv>) => {
    const access = await requireAccess(c, ctx);
    authorize(access, 'migrations:manage');
    return access;
  };
}

const StepSchema = z.object({
  step: z.enum(['dns', 'connect', 'tls', 'login', 'permission', 'list']),
  status: z.enum(['ok', 'failed', 'skipped']),
  detail: z.string().nullable(),
});
export const TestResultSchema = z.object({
  ok: z.boolean(),
  failed_step: z.enum(['dns', 'connect', 'tls', 'login', 'permission', 'list']).nullable(),
  message: z.string(),
  steps: z.array(StepSchema),
});

export const CredentialsSchema = z
  .object({
    username: z.string().max(320).optional(),
    password: z.string().min(1).max(1000).optional().openapi({ description: 'IMAP: the (app) password' }),
    subdomain: z.string().max(100).optional().openapi({ description: 'Zendesk: acme for acme.zendesk.com' }),
    email: z.string().max(320).optional().openapi({ description: 'Zendesk: the agent’s e-mail address' }),
    api_token: z.string().max(200).optional().openapi({ description: 'Zendesk: an API token (Admin Center › Apps and integrations › Zendesk API)' }),
    app_id: z.string().max(200).optional().openapi({ description: 'Help Scout: the App ID of a private app' }),
    app_secret: z.string().max(200).optional().openapi({ description: 'Help Scout: the App Secret' }),
  })
  .strict();
