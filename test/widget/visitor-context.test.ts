// An anonymous chat visitor is named and placed for the team (issue 43 item 13): "Visitor from
// <city, country>" by the location database (in the inbox's language) until they give a name, with
// the page they chat from and their browser kept on the new contact.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createChatChannel } from '../../src/channels/service.js';
import { createInbox } from '../../src/inboxes/service.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { buildMmdb } from '../helpers/mmdb.js';
import { startTestServer, type TestServer, testEnv } from '../helpers/server.js';

const ORIGIN = 'https://shop.example.com';
const CHROME_LINUX = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

describe('a chat visitor’s name and context', () => {
  let s: TestServer;
  let seed: Seed;
  let enKey: string;
  let trKey: string;

  before(async () => {
    const te = await testEnv();
    // The location database analytics keeps, in place before the server starts: loopback is Kadıköy.
    const city = buildMmdb({
      databaseType: 'DBIP-City-Lite',
      entries: [{ network: '127.0.0.0/8', record: { country: { iso_code: 'TR' }, city: { names: { en: 'Kadıköy' } } } }],
    });
    fs.mkdirSync(path.join(te.dataDir, 'geoip'), { recursive: true });
    fs.writeFileSync(path.join(te.dataDir, 'geoip', 'location.mmdb'), city);
    s = await startTestServer({ testEnv: te });
    seed = await seedWorkspace(s.app);
    enKey = (await createChatChannel(s.app, { workspaceId: seed.workspaceId, inboxId: seed.inboxId, name: 'Chat', origins: [ORIGIN], allowAnonymous: true }))
      .public_key!;
    const tr = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Destek', locale: 'tr' });
    trKey = (await createChatChannel(s.app, { workspaceId: seed.workspaceId, inboxId: tr.id, name: 'Sohbet', origins: [ORIGIN], allowAnonymous: true }))
      .public_key!;
  });
  after(() => s.stop());

  async function open(body: Record<string, unknown>) {
    const r = await s.request('POST', '/v1/widget/sessions', { body, headers: { origin: ORIGIN, 'user-agent': CHROME_LINUX } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return (await s.request('GET', `/v1/contacts/${r.body.contact_id}`, { token: seed.apiKey })).body;
  }

  test('named after the place, with the page and the browser; in the inbox’s language', async () => {
    const contact = await open({ public_key: enKey, page_url: 'https://shop.example.com/pricing?plan=pro' });
    assert.match(contact.name, /^Visitor from Kadıköy, T(ü|u)rk/);
    assert.equal(contact.attributes.visitor_page, 'https://shop.example.com/pricing?plan=pro');
    assert.equal(contact.attributes.visitor_browser, 'Chrome on Linux');
    assert.equal(contact.attributes.visitor_country, 'TR');
    assert.equal(contact.attributes.visitor_city, 'Kadıköy');
    const turkish = await open({ public_key: trKey });
    assert.match(turkish.name, /^Kadıköy, Türkiye ziyaretçisi$/);
    assert.equal(turkish.attributes.visitor_page, undefined, 'no page given, none kept');
  });

  test('a name the visitor gives wins; a page that is not an http(s) URL is refused and opens nothing', async () => {
    assert.equal((await open({ public_key: enKey, name: 'Deniz' })).name, 'Deniz');
    const before = await s.app.db.selectFrom('contact_sessions').select('id').execute();
    for (const page_url of ['javascript:alert(1)', 'not a url', `https://shop.example.com/${'a'.repeat(2000)}`]) {
      const r = await s.request('POST', '/v1/widget/sessions', { body: { public_key: enKey, page_url }, headers: { origin: ORIGIN } });
      assert.equal(r.status, 400, page_url.slice(0, 40));
      assert.equal(r.body.error.code, 'invalid_request');
    }
    assert.equal((await s.app.db.selectFrom('contact_sessions').select('id').execute()).length, before.length);
  });
});
