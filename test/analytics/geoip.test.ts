import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { createProperty } from '../../src/analytics/properties.js';
import { ingestionOf } from '../../src/analytics/runtime.js';
import { systemClock } from '../../src/platform/clock.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { buildMmdb } from '../helpers/mmdb.js';
import { runSvc, startTestServer, type TestEnv, type TestServer, testEnv } from '../helpers/server.js';

const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A ustar archive with one file (as MaxMind ships GeoLite2: a folder with the .mmdb in a .tar.gz). */
function tar(name: string, body: Buffer): Buffer {
  const header = Buffer.alloc(512);
  header.write(name, 0, 'utf8');
  header.write('0000644\0', 100);
  header.write('0000000\0', 108);
  header.write('0000000\0', 116);
  header.write(`${body.length.toString(8).padStart(11, '0')}\0`, 124);
  header.write('00000000000\0', 136);
  header.write('        ', 148);
  header.write('0', 156);
  header.write('ustar\0', 257);
  header.write('00', 263);
  let sum = 0;
  for (const b of header) sum += b;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return Buffer.concat([header, body, Buffer.alloc(Math.ceil(body.length / 512) * 512 - body.length), Buffer.alloc(1024)]);
}

describe('location database: svc analytics geoip-update and reload without restart', () => {
  let te: TestEnv;
  let s: TestServer;
  let files: http.Server;
  let base: string;
  const served = new Map<string, Buffer>();
  const country = buildMmdb({ databaseType: 'GeoLite2-Country', entries: [{ network: '127.0.0.0/8', record: { country: { iso_code: 'DE' } } }] });
  const city = buildMmdb({
    databaseType: 'DBIP-City-Lite',
    entries: [
      {
        network: '127.0.0.0/8',
        record: { country: { iso_code: 'TR' }, subdivisions: [{ iso_code: '34', names: { en: 'Istanbul' } }], city: { names: { en: 'Kadıköy' } } },
      },
    ],
  });
  const installed = () => fs.readFileSync(path.join(te.dataDir, 'geoip', 'location.mmdb'));

  before(async () => {
    te = await testEnv();
    files = http.createServer((req, res) => {
      const body = served.get(req.url ?? '');
      if (!body) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(body);
    });
    await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
    served.set('/country.mmdb', country);
    served.set('/country.mmdb.sha256', Buffer.from(`${sha(country)}  country.mmdb\n`));
    served.set('/wrong.mmdb', city);
    served.set('/wrong.mmdb.sha256', Buffer.from(`${sha(country)}  wrong.mmdb\n`));
    served.set('/corrupt.mmdb', Buffer.concat([city.subarray(0, 40), Buffer.from('garbage')]));
    served.set('/notgeo.mmdb', buildMmdb({ databaseType: 'GeoLite2-ASN', entries: [{ network: '127.0.0.0/8', record: { autonomous_system_number: 1 } }] }));
    served.set('/city.tar.gz', gzipSync(tar('GeoLite2-City_20261201/GeoLite2-City.mmdb', city)));
    s = await startTestServer({ testEnv: te, clock: systemClock });
  });
  after(async () => {
    await s.stop();
    await new Promise((r) => files.close(r));
    await te.cleanup();
  });

  async function countryOfNextEvent(domain: string): Promise<{ country: string | null; region: string | null; city: string | null }> {
    const r = await s.request('POST', '/a/e', {
      raw: JSON.stringify({ d: domain, u: `https://${domain}/`, r: null, w: 1200 }),
      headers: { origin: `https://${domain}`, 'user-agent': CHROME, 'content-type': 'text/plain' },
    });
    assert.equal(r.headers.get('svc-analytics-dropped'), null);
    await ingestionOf(s.app).writer.flush();
    return s.app.db.selectFrom('analytics_events').select(['country', 'region', 'city']).orderBy('id', 'desc').executeTakeFirstOrThrow();
  }

  test('without a database the country is unknown and counting goes on', async () => {
    const seed = await seedWorkspace(s.app);
    await createProperty(s.app, { workspaceId: seed.workspaceId, domain: 'geo.example' });
    assert.deepEqual(await countryOfNextEvent('geo.example'), { country: null, region: null, city: null });
  });

  test('a URL source with its published SHA-256 is checked and installed; the running server loads it', async () => {
    const r = await runSvc(['analytics', 'geoip-update', '--source', `${base}/country.mmdb`], { env: te.env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /installed GeoLite2-Country/);
    assert.deepEqual(installed(), country);
    const info = JSON.parse(fs.readFileSync(path.join(te.dataDir, 'geoip', 'location.json'), 'utf8'));
    assert.equal(info.sha256, sha(country));
    ingestionOf(s.app).geo.refresh(); // what the server's 30-second check does
    assert.deepEqual(await countryOfNextEvent('geo.example'), { country: 'DE', region: null, city: null });
  });

  test('a wrong checksum, a corrupt file or a database of another kind leaves the old database in use', async () => {
    for (const [source, reason] of [
      [`${base}/wrong.mmdb`, /SHA-256 does not match/],
      [`${base}/corrupt.mmdb`, /not a location database|test lookup failed/],
      [`${base}/notgeo.mmdb`, /not a country or city database/],
      [`${base}/missing.mmdb`, /answered 404/],
      ['ftp://example.com/x.mmdb', /must be https/],
      [`file:${path.join(te.dataDir, 'nothing-here.mmdb')}`, /cannot read/],
    ] as const) {
      const r = await runSvc(['analytics', 'geoip-update', '--source', source], { env: te.env });
      assert.equal(r.code, 1, source);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, reason);
      assert.deepEqual(installed(), country, source);
    }
    const bad = await runSvc(['analytics', 'geoip-update', '--source', `${base}/country.mmdb`, '--edition', 'city'], { env: te.env });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /asked for a city database/);
    ingestionOf(s.app).geo.refresh();
    assert.equal((await countryOfNextEvent('geo.example')).country, 'DE');
  });

  test('a city edition in a .tar.gz replaces it (the old one kept as .previous); regions and cities are counted', async () => {
    const r = await runSvc(
      ['analytics', 'geoip-update', '--source', `${base}/city.tar.gz`, '--edition', 'city', '--sha256', sha(served.get('/city.tar.gz')!)],
      {
        env: te.env,
      },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /DB-IP/, 'the licence’s attribution is named');
    assert.deepEqual(installed(), city);
    assert.deepEqual(fs.readFileSync(path.join(te.dataDir, 'geoip', 'location.mmdb.previous')), country);
    ingestionOf(s.app).geo.refresh();
    assert.deepEqual(await countryOfNextEvent('geo.example'), { country: 'TR', region: 'Istanbul', city: 'Kadıköy' });
    const local = await runSvc(['analytics', 'geoip-update', '--source', `file:${path.join(te.dataDir, 'geoip', 'location.mmdb.previous')}`], { env: te.env });
    assert.equal(local.code, 0, local.stderr);
    assert.deepEqual(installed(), country);
  });
});
