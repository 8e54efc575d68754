// A person's own sessions: list them, end one, end them all ("sign out everywhere").
import { ACCESS_REVOKED, type AccessRevoked } from '../auth/revocation.js';
import type { Ctx } from '../context.js';
import { iso } from '../platform/clock.js';
import { notFound } from '../platform/errors.js';

export async function listSessions(ctx: Pick<Ctx, 'db' | 'clock'>, personId: string, currentSessionId: string) {
  const rows = await ctx.db
    .selectFrom('sessions')
    .select(['id', 'created_at', 'last_used_at', 'expires_at', 'user_agent'])
    .where('person_id', '=', personId)
    .where('expires_at', '>', iso(ctx.clock.now()))
    .orderBy('id', 'desc')
    .execute();
  return rows.map((r) => ({ ...r, current: r.id === currentSessionId }));
}

/** Ends sessions of this person (all of them, or the ones named); their realtime sockets close at once. */
export async function endSessions(ctx: Pick<Ctx, 'db' | 'hub'>, personId: string, sessionIds?: string[]): Promise<string[]> {
  let q = ctx.db.selectFrom('sessions').select('id').where('person_id', '=', personId);
  if (sessionIds) q = q.where('id', 'in', sessionIds.length ? sessionIds : ['']);
  const ids = (await q.execute()).map((r) => r.id);
  if (sessionIds && ids.length !== sessionIds.length) throw notFound('session');
  if (ids.length) {
    await ctx.db.deleteFrom('sessions').where('person_id', '=', personId).where('id', 'in', ids).execute();
    ctx.hub.emit(ACCESS_REVOKED, { sessionIds: ids } satisfies AccessRevoked);
  }
  return ids;
}
