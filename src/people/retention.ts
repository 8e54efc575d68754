// Retention of sign-in leftovers: expired sessions and old one-time codes.
import { DAY } from '../platform/clock.js';
import { olderThanRule } from '../platform/retention-rule.js';

/** Sessions past their expiry (they no longer sign anyone in). */
export const expiredSessionsRule = olderThanRule({ name: 'sessions', table: 'sessions', key: 'id', columns: ['expires_at'], keptMs: 0 });

/** Sign-in codes a day after they were made (the hourly request limit looks back one hour). */
export const SIGN_IN_CODES_KEPT_MS = DAY;

export const signInCodesRule = olderThanRule({
  name: 'sign_in_codes',
  table: 'sign_in_codes',
  key: 'id',
  columns: ['created_at'],
  keptMs: SIGN_IN_CODES_KEPT_MS,
});

/** Sign-in links a day after they were made (they work for 15 minutes). */
export const signInLinksRule = olderThanRule({ name: 'sign_in_links', table: 'sign_in_links', key: 'id', columns: ['created_at'], keptMs: DAY });
