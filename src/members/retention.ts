// Retention and workspace deletion of invites.

import { DAY } from '../platform/clock.js';
import type { WorkspaceDataStep } from '../platform/lifecycle.js';
import { olderThanRule } from '../platform/retention-rule.js';

/** Invites are kept this long after they were accepted, revoked or expired (then the row goes). */
export const ENDED_INVITES_KEPT_MS = 30 * DAY;

export const endedInvitesRule = olderThanRule({
  name: 'invites',
  table: 'invites',
  key: 'id',
  columns: ['accepted_at', 'revoked_at', 'expires_at'],
  keptMs: ENDED_INVITES_KEPT_MS,
});

export const workspaceInvitesStep: WorkspaceDataStep = {
  name: 'invites',
  async deleteBatch(ctx, workspaceId, batch) {
    const r = await ctx.db
      .deleteFrom('invites')
      .where('id', 'in', (eb) => eb.selectFrom('invites as i').select('i.id').where('i.workspace_id', '=', workspaceId).limit(batch))
      .executeTakeFirst();
    return { rows: Number(r.numDeletedRows), files: 0 };
  },
};
