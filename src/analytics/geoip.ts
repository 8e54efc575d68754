// The location database (MMDB: MaxMind GeoLite2 or DB-IP Lite, country or city edition) that turns
// a client address into a country (and, with a city edition, region and city) at ingestion. The
// address itself is never stored. Without a database the country is unknown and nothing else
// changes. `svc analytics geoip-update` replaces the file; running servers see the new file (its
// identity changes with the rename) within GEOIP_RECHECK_MS and load it without a restart. A file
// that does not pass the check leaves the database in use as it was.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Reader, Response } from 'mmdb-lib';

export const GEOIP_RECHECK_MS = 30_000;
export const GEOIP_FILE = 'location.mmdb';
export const GEOIP_PREVIOUS = 'location.mmdb.previous';
export const GEOIP_INFO = 'location.json';
export type Edition = 'country' | 'city';

interface LocationRecord {
  country?: { iso_code?: string };
  subdivisions?: { iso_code?: string; names?: Record<string, string> }[];
  city?: { names?: Record<string, string> };
}

export interface Location {
  country: string | null;
  region: string | null;
  city: string | null;
}

export const UNKNOWN: Location = { country: null, region: null, city: null };

export function geoipDir(dataDir: string): string {
  return path.join(dataDir, 'geoip');
}

/** Opens and checks a database: MMDB that opens, a type that fits the edition, a lookup that works. Throws with the reason. */
export function openDatabase(buffer: Buffer, edition?: Edition): Reader<Response> {
  let reader: Reader<Response>;
  try {
    // Required when a database is opened: a server without one does not load mmdb-lib.
    const { Reader: MmdbReader } = createRequire(import.meta.url)('mmdb-lib') as typeof import('mmdb-lib');
    reader = new MmdbReader<Response>(buffer);
  } catch (error) {
    throw new Error(`not a location database (MMDB): ${(error as Error).message}`);
  }
  const type = reader.metadata.databaseType ?? '';
  if (!/country|city/i.test(type)) throw new Error(`the database type ${JSON.stringify(type)} is not a country or city database`);
  if (edition === 'city' && !/city/i.test(type)) throw new Error(`asked for a city database, got ${JSON.stringify(type)}`);
  try {
    reader.get('1.1.1.1');
    reader.get('8.8.8.8');
  } catch (error) {
    throw new Error(`a test lookup failed: ${(error as Error).message}`);
  }
  return reader;
}

/** Our address forms: IPv4-mapped IPv6 (::ffff:1.2.3.4) is looked up as IPv4. */
function plainAddress(address: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m ? m[1] : address;
}

/** The database a server uses, reloaded when the file on disk changes. */
export class GeoDatabase {
  private reader: Reader<Response> | undefined;
  private identity = '';
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly dir: string,
    private readonly log: { info(msg: string, f?: object): void; warn(msg: string, f?: object): void },
  ) {}

  get loaded(): boolean {
    return this.reader !== undefined;
  }

  get databaseType(): string | null {
    return this.reader?.metadata.databaseType ?? null;
  }

  /** Loads the file when it is new or changed; a file that fails the check keeps the database in use. */
  refresh(): void {
    const file = path.join(this.dir, GEOIP_FILE);
    let stat: fs.Stats;
    try {
      stat = fs.statSync(file);
    } catch {
      return;
    }
    const identity = `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
    if (identity === this.identity) return;
    this.identity = identity;
    try {
      this.reader = openDatabase(fs.readFileSync(file));
      this.log.info('location database loaded', { type: this.reader.metadata.databaseType });
    } catch (error) {
      this.log.warn('location database not loaded; the one in use stays', { reason: (error as Error).message });
    }
  }

  start(): void {
    this.refresh();
    this.timer = setInterval(() => this.refresh(), GEOIP_RECHECK_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  lookup(address: string): Location {
    if (!this.reader) return UNKNOWN;
    try {
      const r = this.reader.get(plainAddress(address)) as LocationRecord | null;
      if (!r) return UNKNOWN;
      const sub = r.subdivisions?.[0];
      return { country: r.country?.iso_code ?? null, region: sub?.names?.en ?? sub?.iso_code ?? null, city: r.city?.names?.en ?? null };
    } catch {
      return UNKNOWN;
    }
  }
}
