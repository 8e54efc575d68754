// What channel sign-ins add to the data lifecycle (src/lifecycle/registry.ts): sign-ins under way
// that expired go an hour later; a deleted workspace's grants (sealed tokens) go at its first steps
// (a deleted channel's go with it: the foreign keys cascade).
import { HOUR, iso } from '../platform/clock.js';
import type { RetentionRule, WorkspaceDataStep } from '../platform/lifecycle.js';

export const channelSignInsRule: RetentionRule = {
  name: 'channel_sign_ins',
  async deleteBatch(ctx, now, batch) {
    const due = await ctx.db
      .selectFrom('channel_sign_ins')
      .select('state_hash')
      .where('expires_at', '<=', iso(now.getTime() - HOUR))
      .limit(batch)
      .execute();
    if (due.length === 0) return 0;
    const res = await ctx.db
      .deleteFrom('channel_sign_ins')
      .where(
        'state_hash',
        'in',
        due.map((r) => r.state_hash),
      )
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  },
  shortBatchIsLast: true,
};

export const channelGrantsWorkspaceStep: WorkspaceDataStep = {
  name: 'channel_grants',
  async deleteBatch(ctx, workspaceId) {
    const signIns = await ctx.db.deleteFrom('channel_sign_ins').where('workspace_id', '=', workspaceId).executeTakeFirst();
    const grants = await ctx.db.deleteFrom('channel_grants').where('workspace_id', '=', workspaceId).executeTakeFirst();
    return { rows: Number(signIns.numDeletedRows) + Number(grants.numDeletedRows), files: 0 };
  },
};
