// Workspace and inbox deletion delete the tenants at the provider (then their rows).
import type { WorkspaceDataStep } from '../platform/lifecycle.js';
import { deleteInboxTenant } from './service.js';

export const mailerTenantWorkspaceSteps: WorkspaceDataStep[] = [
  {
    name: 'mailer_tenants',
    async deleteBatch(ctx, workspaceId, batch) {
      const rows = await ctx.db.selectFrom('mailer_tenants').select('inbox_id').where('workspace_id', '=', workspaceId).limit(Math.min(batch, 20)).execute();
      for (const r of rows) await deleteInboxTenant(ctx, r.inbox_id);
      return { rows: rows.length, files: 0 };
    },
    async deleteInboxBatch(ctx, { inboxId }) {
      return { rows: (await deleteInboxTenant(ctx, inboxId)) ? 1 : 0, files: 0 };
    },
  },
];
