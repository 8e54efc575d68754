// What every migration route file shares: the OpenAPI tag, the id parameter, and who may act
// (owners, admins, and API keys with migrations:manage and no inbox limit).
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
