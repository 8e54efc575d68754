// The analytics parts that live as long as the server: the ingestion (with its caches) and the
// event buffer. One per application object, shared by the routes and the background part (which
// flushes the buffer when the server stops).
import type { Ctx } from '../context.js';
import { GeoDatabase, geoipDir } from './geoip.js';
import { Ingestion } from './ingest.js';
import { SaltCache } from './visitor.js';
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
