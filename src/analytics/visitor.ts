// Counting without cookies: a visitor is a hash of the UTC day's random salt, the property, the
// client address and the user agent. Salts exist for today and yesterday only (yesterday's so that
// a visit across midnight and the conversation attribution of late visitors still match); older
// ones are deleted, after which nobody (not even the operator) can link those hashes to an address.
import { createHash, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { isbot } from 'isbot';
import type { UAParser as Parser } from 'ua-parser-js';
import type { Ctx } from '../context.js';
import type { Db } from '../db/schema.js';
import { DAY, iso } from '../platform/clock.js';

export const dayOf = (d: Date | number): string => iso(d).slice(0, 10);

/** The salt of the UTC day `day`, made (once, whoever comes first) when missing. */
export async function saltFor(db: Db, day: string, now: Date): Promise<string> {
  const found = await db.selectFrom('analytics_salts').select('salt').where('day', '=', day).executeTakeFirst();
  if (found) return found.salt;
  await db
    .insertInto('analytics_salts')
    .values({ day, salt: randomBytes(32).toString('base64url'), created_at: iso(now) })
    .onConflict((oc) => oc.column('day').doNothing())
    .execute();
  const row = await db.selectFrom('analytics_salts').select('salt').where('day', '=', day).executeTakeFirstOrThrow();
  return row.salt;
}

/** Deletes the salts of days before yesterday (run hourly and whenever a new day's salt is made). */
export async function deleteOldSalts(db: Db, now: Date): Promise<number> {
  const r = await db
    .deleteFrom('analytics_salts')
    .where('day', '<', dayOf(now.getTime() - DAY))
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

export function visitorHash(salt: string, propertyId: string, address: string, userAgent: string): string {
  return createHash('sha256').update(`${salt}\0${propertyId}\0${address}\0${userAgent}`).digest('base64url').slice(0, 22);
}

/** Today's salts, cached per process for the day (a salt never changes once made). */
export class SaltCache {
  private day = '';
  private salt = '';
  async today(ctx: Pick<Ctx, 'db' | 'clock'>): Promise<{ day: string; salt: string }> {
    const now = ctx.clock.now();
    const day = dayOf(now);
    if (day !== this.day) {
      this.salt = await saltFor(ctx.db, day, now);
      this.day = day;
      await deleteOldSalts(ctx.db, now);
    }
    return { day: this.day, salt: this.salt };
  }
}

export interface Agent {
  browser: string | null;
  os: string | null;
  device: 'desktop' | 'mobile' | 'tablet' | null;
}

/** True for crawlers, headless browsers and tools (isbot's list), and for requests without a user agent. */
export function isBotAgent(userAgent: string | undefined): boolean {
  if (!userAgent) return true;
  let bot = botAgents.get(userAgent);
  if (bot === undefined) {
    if (botAgents.size >= MAX_PARSED) botAgents.clear();
    bot = isbot(userAgent) || /HeadlessChrome|PhantomJS|Lighthouse/i.test(userAgent);
    botAgents.set(userAgent, bot);
  }
  return bot;
}
// isbot's one large expression per event showed in profiles of the ingest bench; the strings repeat.
const botAgents = new Map<string, boolean>();

// Parsed user agents, per process: a site's visitors share few distinct strings, and parsing one
// costs far more than the rest of an event. Bounded: cleared when full.
const parsed = new Map<string, { browser: string | null; os: string | null; type: string | undefined }>();
const MAX_PARSED = 5000;
let UAParser: typeof Parser | undefined;

function parseAgent(userAgent: string) {
  let r = parsed.get(userAgent);
  if (!r) {
    // Required on first use: a server whose sites send no analytics does not load it.
    UAParser ??= (createRequire(import.meta.url)('ua-parser-js') as { UAParser: typeof Parser }).UAParser;
    const p = UAParser(userAgent);
    r = { browser: p.browser.name ?? null, os: p.os.name ?? null, type: p.device.type };
    if (parsed.size >= MAX_PARSED) parsed.clear();
    parsed.set(userAgent, r);
  }
  return r;
}

/** The user agent reduced to browser name, OS name and device class; the string itself is not kept. */
export function reduceAgent(userAgent: string, screenWidth: number | undefined): Agent {
  const r = parseAgent(userAgent);
  const type = r.type;
  let device: Agent['device'] = type === 'mobile' || type === 'wearable' ? 'mobile' : type === 'tablet' ? 'tablet' : null;
  if (!device && screenWidth !== undefined) device = screenWidth < 576 ? 'mobile' : screenWidth < 992 ? 'tablet' : 'desktop';
  device ??= 'desktop';
  return { browser: r.browser, os: r.os, device };
}
