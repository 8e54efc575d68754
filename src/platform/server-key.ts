// Random keys of this server (HMAC keys and the like): created once, stored sealed under the
// master key in server_meta, read once per running app.
import { randomBytes } from 'node:crypto';
import type { Ctx } from '../context.js';

// Keyed by the sealer: one cache per running app (no module-level state shared between apps).
const cache = new WeakMap<object, Map<string, Promise<Buffer>>>();

/** The 32-byte key stored under `name` in server_meta, made at first use (a racing maker's insert is ignored). */
export function serverKey(ctx: Pick<Ctx, 'db' | 'sealer'>, name: string): Promise<Buffer> {
  let keys = cache.get(ctx.sealer);
  if (!keys) cache.set(ctx.sealer, (keys = new Map()));
  let key = keys.get(name);
  if (!key) {
    key = (async () => {
      await ctx.db
        .insertInto('server_meta')
        .values({ key: name, value: ctx.sealer.seal(randomBytes(32).toString('base64')) })
        .onConflict((oc) => oc.column('key').doNothing())
        .execute();
      const row = await ctx.db.selectFrom('server_meta').select('value').where('key', '=', name).executeTakeFirstOrThrow();
      return Buffer.from(ctx.sealer.open(row.value), 'base64');
    })();
    key.catch(() => keys.delete(name));
    keys.set(name, key);
  }
  return key;
}
