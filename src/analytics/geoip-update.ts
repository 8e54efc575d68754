// `svc analytics geoip-update`: fetches a location database (MaxMind GeoLite2 with the published
// SHA-256, DB-IP Lite's monthly file falling back to the previous month, a URL, or a file), checks
// it (opens as MMDB, its type fits, a lookup works), writes it beside the one in use, fsyncs, keeps
// the old one as location.mmdb.previous and renames the new one over it. Running servers notice the
// new file and load it (src/analytics/geoip.ts). Anything that fails leaves the database in use.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { Config } from '../config.js';
import { AppError, invalid } from '../platform/errors.js';
import { type Edition, GEOIP_FILE, GEOIP_INFO, GEOIP_PREVIOUS, geoipDir, openDatabase } from './geoip.js';

const MAX_BYTES = 300 * 1024 * 1024;
const TIMEOUT_MS = 5 * 60_000;
export const DBIP_ATTRIBUTION = 'IP Geolocation by DB-IP (https://db-ip.com), CC BY 4.0';
export const MAXMIND_ATTRIBUTION = 'This product includes GeoLite2 data created by MaxMind, available from https://www.maxmind.com';

const failed = (message: string) => new AppError(502, 'geoip_update_failed', message);

export interface UpdateResult {
  file: string;
  databaseType: string;
  sha256: string;
  source: string;
  attribution: string | null;
}

async function download(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: Buffer }> {
  let res: Response;
  try {
    res = await fetch(url, { headers, redirect: 'follow', signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (error) {
    throw failed(`could not fetch ${redact(url)}: ${(error as Error).message}`);
  }
  const length = Number(res.headers.get('content-length') ?? 0);
  if (length > MAX_BYTES) throw failed(`${redact(url)} is larger than ${MAX_BYTES} bytes`);
  const body = Buffer.from(await res.arrayBuffer());
  if (body.length > MAX_BYTES) throw failed(`${redact(url)} is larger than ${MAX_BYTES} bytes`);
  return { status: res.status, body };
}

const redact = (url: string) => url.replace(/\/\/[^@/]*@/, '//');

function checkUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw invalid(`not a source: ${JSON.stringify(raw)}; use maxmind, dbip, an https URL or file:<path>`);
  }
  const loopback = /^(127\.\d+\.\d+\.\d+|\[::1\]|localhost)$/.test(u.hostname);
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && loopback)) throw invalid('a database URL must be https (http only on this machine)');
  return u.toString();
}

/** The .mmdb inside a download: as is, gunzipped, or the first .mmdb entry of a (gzipped) tar. */
export function unpack(data: Buffer): Buffer {
  let buf = data;
  if (buf[0] === 0x1f && buf[1] === 0x8b) {
    try {
      buf = gunzipSync(buf, { maxOutputLength: MAX_BYTES });
    } catch (error) {
      throw failed(`the download is not valid gzip: ${(error as Error).message}`);
    }
  }
  if (buf.length > 512 && buf.subarray(257, 262).toString('latin1') === 'ustar') {
    for (let at = 0; at + 512 <= buf.length; ) {
      const name = buf
        .subarray(at, at + 100)
        .toString('utf8')
        .replace(/\0.*$/s, '');
      if (!name) break;
      const size = parseInt(
        buf
          .subarray(at + 124, at + 136)
          .toString('latin1')
          .replace(/\0.*$/s, '')
          .trim() || '0',
        8,
      );
      const start = at + 512;
      if (name.endsWith('.mmdb')) return buf.subarray(start, start + size);
      at = start + Math.ceil(size / 512) * 512;
    }
    throw failed('the archive holds no .mmdb file');
  }
  return buf;
}

async function fromMaxmind(config: Config, edition: Edition) {
  const account = config.analytics.maxmind;
  if (!account) throw invalid('--source maxmind needs SVC_GEOIP_ACCOUNT_ID and SVC_GEOIP_LICENSE_KEY (a free GeoLite2 account)');
  const base = `https://download.maxmind.com/geoip/databases/GeoLite2-${edition === 'city' ? 'City' : 'Country'}/download`;
  const auth = { authorization: `Basic ${Buffer.from(`${account.accountId}:${account.licenseKey}`).toString('base64')}` };
  const sums = await download(`${base}?suffix=tar.gz.sha256`, auth);
  if (sums.status !== 200) throw failed(`MaxMind answered ${sums.status} for the checksum (check the account id and licence key)`);
  const expected = /^[0-9a-f]{64}/i.exec(sums.body.toString('utf8').trim())?.[0].toLowerCase();
  if (!expected) throw failed('MaxMind’s checksum file holds no SHA-256');
  const archive = await download(`${base}?suffix=tar.gz`, auth);
  if (archive.status !== 200) throw failed(`MaxMind answered ${archive.status} for the database`);
  checkSha(archive.body, expected);
  return { data: archive.body, source: `maxmind GeoLite2-${edition}`, attribution: MAXMIND_ATTRIBUTION };
}

async function fromDbip(edition: Edition, now: Date) {
  for (const back of [0, 1]) {
    const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1));
    const month = d.toISOString().slice(0, 7);
    const url = `https://download.db-ip.com/free/dbip-${edition}-lite-${month}.mmdb.gz`;
    const r = await download(url);
    if (r.status === 200) return { data: r.body, source: `dbip ${edition} lite ${month}`, attribution: DBIP_ATTRIBUTION };
    if (r.status !== 404) throw failed(`DB-IP answered ${r.status} for ${month}`);
  }
  throw failed('DB-IP has neither this month’s nor last month’s file');
}

async function fromUrl(raw: string, sha256: string | undefined) {
  const url = checkUrl(raw);
  const r = await download(url);
  if (r.status !== 200) throw failed(`${redact(url)} answered ${r.status}`);
  let expected = sha256?.toLowerCase();
  if (!expected) {
    const sums = await download(`${url}.sha256`);
    if (sums.status === 200) expected = /^[0-9a-f]{64}/i.exec(sums.body.toString('utf8').trim())?.[0].toLowerCase();
    if (sums.status === 200 && !expected) throw failed(`${redact(url)}.sha256 holds no SHA-256`);
  }
  if (expected) checkSha(r.body, expected);
  return { data: r.body, source: redact(url), attribution: null };
}

function checkSha(data: Buffer, expected: string): void {
  const actual = createHash('sha256').update(data).digest('hex');
  if (actual !== expected) throw failed(`the SHA-256 does not match (expected ${expected}, got ${actual}); the database in use stays`);
}

export async function updateGeoip(config: Config, opts: { source?: string; edition?: string; sha256?: string; now?: Date }): Promise<UpdateResult> {
  const edition = (opts.edition ?? 'country') as Edition;
  if (edition !== 'country' && edition !== 'city') throw invalid('--edition must be country or city');
  if (opts.sha256 !== undefined && !/^[0-9a-fA-F]{64}$/.test(opts.sha256)) throw invalid('--sha256 must be 64 hex digits');
  const source = opts.source ?? (config.analytics.maxmind ? 'maxmind' : 'dbip');
  let got: { data: Buffer; source: string; attribution: string | null };
  if (source === 'maxmind') got = await fromMaxmind(config, edition);
  else if (source === 'dbip') got = await fromDbip(edition, opts.now ?? new Date());
  else if (source.startsWith('file:')) {
    const file = source.slice(5);
    let data: Buffer;
    try {
      data = fs.readFileSync(file);
    } catch (error) {
      throw invalid(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    if (opts.sha256) checkSha(data, opts.sha256.toLowerCase());
    got = { data, source: `file ${path.resolve(file)}`, attribution: /dbip/i.test(file) ? DBIP_ATTRIBUTION : null };
  } else got = await fromUrl(source, opts.sha256);

  const mmdb = unpack(got.data);
  let databaseType: string;
  try {
    databaseType = openDatabase(mmdb, opts.edition ? edition : undefined).metadata.databaseType;
  } catch (error) {
    throw failed(`${(error as Error).message}; the database in use stays`);
  }
  if (/dbip|db-ip/i.test(databaseType) && !got.attribution) got.attribution = DBIP_ATTRIBUTION;
  const sha256 = createHash('sha256').update(mmdb).digest('hex');
  return install(geoipDir(config.dataDir), mmdb, { databaseType, sha256, source: got.source, attribution: got.attribution });
}

/** Writes beside, fsyncs, keeps the old file as .previous (a hard link), renames over, fsyncs the folder. */
function install(dir: string, mmdb: Buffer, info: Omit<UpdateResult, 'file'>): UpdateResult {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, GEOIP_FILE);
  const fresh = path.join(dir, `${GEOIP_FILE}.new-${process.pid}`);
  writeSynced(fresh, mmdb);
  writeSynced(path.join(dir, `${GEOIP_INFO}.new-${process.pid}`), JSON.stringify({ ...info, installed_at: new Date().toISOString() }, null, 2) + '\n');
  if (fs.existsSync(file)) {
    const keep = path.join(dir, `${GEOIP_PREVIOUS}.new-${process.pid}`);
    fs.rmSync(keep, { force: true });
    fs.linkSync(file, keep);
    fs.renameSync(keep, path.join(dir, GEOIP_PREVIOUS));
  }
  fs.renameSync(fresh, file);
  fs.renameSync(path.join(dir, `${GEOIP_INFO}.new-${process.pid}`), path.join(dir, GEOIP_INFO));
  const d = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(d);
  } finally {
    fs.closeSync(d);
  }
  return { file, ...info };
}

function writeSynced(file: string, data: Buffer | string): void {
  const fd = fs.openSync(file, 'w', 0o600);
  try {
    fs.writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
