// Retention of sign-in leftovers: expired sessions and old one-time codes.
import type { RetentionRule } from '../platform/lifecycle.js';
import { DAY, iso } from '../platform/clock.js';

/** Sessions past their expiry (they no longer sign anyone in). */
export const expiredSessionsRule: RetentionRule = {
  name: 'sessions',
  async deleteBatch(ctx, now, batch) {
    const r = await ctx.db
      .deleteFrom('sessions')
      .where('id', 'in', (eb) => eb.selectFrom('sessions as s').select('s.id').where('s.expires_at', '<', iso(now)).limit(batch))
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  },
};

/** Sign-in codes a day after they were made (the hourly request limit looks back one hour). */
export const SIGN_IN_CODES_KEPT_MS = DAY;

export const signInCodesRule: RetentionRule = {
  name: 'sign_in_codes',
  async deleteBatch(ctx, now, batch) {
    const r = await ctx.db
      .deleteFrom('sign_in_codes')
      .where('id', 'in', (eb) => eb.selectFrom('sign_in_codes as c').select('c.id').where('c.created_at', '<', iso(now.getTime() - SIGN_IN_CODES_KEPT_MS)).limit(batch))
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  },
};

/** Sign-in links a day after they were made (they work for 15 minutes). */
export const signInLinksRule: RetentionRule = {
  name: 'sign_in_links',
  async deleteBatch(ctx, now, batch) {
    const r = await ctx.db
      .deleteFrom('sign_in_links')
      .where('id', 'in', (eb) => eb.selectFrom('sign_in_links as l').select('l.id').where('l.created_at', '<', iso(now.getTime() - DAY)).limit(batch))
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  },
};
