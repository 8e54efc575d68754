// Retention and workspace deletion of invites.
import type { RetentionRule, WorkspaceDataStep } from '../platform/lifecycle.js';
import { DAY, iso } from '../platform/clock.js';

/** Invites are kept this long after they were accepted, revoked or expired (then the row goes). */
export const ENDED_INVITES_KEPT_MS = 30 * DAY;

export const endedInvitesRule: RetentionRule = {
  name: 'invites',
  async deleteBatch(ctx, now, batch) {
    const before = iso(now.getTime() - ENDED_INVITES_KEPT_MS);
    const r = await ctx.db
      .deleteFrom('invites')
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('invites as i')
          .select('i.id')
          .where((w) => w.or([w('i.accepted_at', '<', before), w('i.revoked_at', '<', before), w('i.expires_at', '<', before)]))
          .limit(batch),
      )
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  },
};

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
