// The analytics parts that live as long as the server: the ingestion (with its caches) and the
// event buffer. One per application object, shared by the routes and the background part (which
// flushes the buffer when the server stops).
import type { Ctx } from '../context.js';
import { GeoDatabase, geoipDir, type Location } from './geoip.js';
import { Ingestion } from './ingest.js';
import { reduceAgent, SaltCache } from './visitor.js';
import { EventWriter } from './writer.js';

const running = new WeakMap<Ctx, Ingestion>();

export function ingestionOf(ctx: Ctx): Ingestion {
  let ingestion = running.get(ctx);
  if (!ingestion) {
    ingestion = new Ingestion(ctx, new EventWriter(ctx), new SaltCache(), new GeoDatabase(geoipDir(ctx.config.dataDir), ctx.log));
    running.set(ctx, ingestion);
  }
  return ingestion;
}

/** Where an address is, by the location database analytics keeps (unknown without one). */
export function locateAddress(ctx: Ctx, address: string): Location {
  return ingestionOf(ctx).geo.lookup(address);
}

/** "Chrome on Linux" from a User-Agent header (what a visitor's contact shows), or null. */
export function describeAgent(userAgent: string | undefined): string | null {
  if (!userAgent) return null;
  const a = reduceAgent(userAgent, undefined);
  return [a.browser, a.os].filter(Boolean).join(' on ') || null;
}
