// Address safety: every non-public address form is refused when a URL is saved and again at every
// delivery, on the resolved answer as a whole and on the address actually connected to.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { iso, ManualClock } from '../../src/platform/clock.js';
import { newId } from '../../src/platform/ids.js';
import { checkWebhookUrl, nonPublicRange, URL_MAX_LENGTH } from '../../src/webhooks/address.js';
import { newSigningSecret } from '../../src/webhooks/signing.js';
import { emitMessage } from '../helpers/events.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Receiver, startReceiver } from '../helpers/webhooks.js';

// A documentation-free public address that is only ever "resolved", never connected to.
const PUBLIC = '93.184.216.34';

const REFUSED_URLS: [string, string][] = [
  ['http://127.0.0.1/hook', 'loopback'],
  ['http://127.1/hook', 'loopback'], // short form
  ['http://2130706433/hook', 'loopback'], // one number
  ['http://0177.0.0.1/hook', 'loopback'], // octal
  ['http://0x7f.0.0.1/hook', 'loopback'], // hex
  ['http://0x7f000001/hook', 'loopback'],
  ['http://017700000001/hook', 'loopback'],
  ['http://[::1]/hook', 'loopback'],
  ['http://10.1.2.3/hook', 'private'],
  ['http://172.16.0.1/hook', 'private'],
  ['http://192.168.1.1/hook', 'private'],
  ['http://169.254.169.254/latest/meta-data', 'linkLocal'],
  ['http://[fe80::1]/hook', 'linkLocal'],
  ['http://100.64.0.1/hook', 'carrierGradeNat'],
  ['http://[fc00::1]/hook', 'uniqueLocal'],
  ['http://[fd12:3456::1]/hook', 'uniqueLocal'],
  ['http://224.0.0.1/hook', 'multicast'],
  ['http://[ff02::1]/hook', 'multicast'],
  ['http://240.0.0.1/hook', 'reserved'],
  ['http://192.0.2.10/hook', 'reserved'],
  ['http://[2001:db8::1]/hook', 'reserved'],
  ['http://255.255.255.255/hook', 'broadcast'],
  ['http://0.0.0.0/hook', 'unspecified'],
  ['http://[::]/hook', 'unspecified'],
  ['http://[::ffff:127.0.0.1]/hook', 'loopback'], // IPv4-mapped, judged as the IPv4 address
  ['http://[::ffff:a01:203]/hook', 'private'],
  ['http://[::ffff:169.254.169.254]/hook', 'linkLocal'],
  ['http://[::ffff:7f00:1]/hook', 'loopback'], // IPv4-mapped in hex
  ['http://[::ffff:0:7f00:1]/hook', 'rfc6145'], // IPv4-translated: refused whatever it embeds
  // IPv4-compatible (::/96, deprecated): ipaddr.js calls it unicast; refused whatever it embeds.
  ['http://[::127.0.0.1]/hook', 'ipv4Compatible address embedding 127.0.0.1, a loopback'],
  ['http://[::7f00:1]/hook', 'ipv4Compatible address embedding 127.0.0.1, a loopback'],
  ['http://[::10.1.2.3]/hook', 'ipv4Compatible address embedding 10.1.2.3, a private'],
  ['http://[::93.184.216.34]/hook', 'ipv4Compatible'],
  // NAT64, well-known prefix: the last 32 bits.
  ['http://[64:ff9b::7f00:1]/hook', 'rfc6052 address embedding 127.0.0.1, a loopback'],
  ['http://[64:ff9b::10.0.0.1]/hook', 'rfc6052 address embedding 10.0.0.1, a private'],
  ['http://[64:ff9b::169.254.169.254]/hook', 'rfc6052 address embedding 169.254.169.254, a linkLocal'],
  // NAT64, local-use prefix: the layout is the local network's choice, so refused whatever it embeds.
  ['http://[64:ff9b:1::7f00:1]/hook', 'rfc8215'],
  ['http://[64:ff9b:1::93.184.216.34]/hook', 'rfc8215'],
  ['http://[64:ff9b:1:7f00:0:1:5db8:d822]/hook', 'rfc8215'], // 127.0.0.1 in the /48 layout
  // 6to4: bits 16-47.
  ['http://[2002:7f00:1::1]/hook', '6to4 address embedding 127.0.0.1, a loopback'],
  ['http://[2002:c0a8:101::1]/hook', '6to4 address embedding 192.168.1.1, a private'],
  ['http://[2002:a9fe:a9fe::1]/hook', '6to4 address embedding 169.254.169.254, a linkLocal'],
  // Teredo: the server in bits 32-63, the client in the last 32 bits XOR 0xffffffff.
  ['http://[2001:0:5db8:d822::80ff:fffe]/hook', 'teredo address whose client is 127.0.0.1, a loopback'],
  ['http://[2001:0:5db8:d822:8000:63bf:f5fe:fefe]/hook', 'teredo address whose client is 10.1.1.1, a private'],
  ['http://[2001:0:a00:1::a2a2:2901]/hook', 'teredo address whose server is 10.0.0.1, a private'],
  ['http://[fec0::1]/hook', 'deprecatedSiteLocal'], // site-local
];

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('webhook address safety', () => {
  let s: TestServer;
  let seed: Seed;
  let rx: Receiver;
  const answers = new Map<string, string[]>();

  before(async () => {
    s = await startTestServer({ clock: new ManualClock() });
    s.app.lookup = async (host) => {
      const found = answers.get(host);
      if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
    seed = await seedWorkspace(s.app);
    rx = await startReceiver();
  });
  after(async () => {
    await rx.close();
    await s.stop();
  });

  test('ranges come from ipaddr.js: only public unicast passes', () => {
    assert.equal(nonPublicRange(PUBLIC), undefined);
    assert.equal(nonPublicRange('2606:4700:4700::1111'), undefined);
    assert.equal(nonPublicRange('::ffff:93.184.216.34'), undefined, 'a mapped public address is public');
    // A translator or relay hands these to a public IPv4 host: as public as any global IPv6 address.
    assert.equal(nonPublicRange('64:ff9b::93.184.216.34'), undefined, 'NAT64 (DNS64) of a public address');
    assert.equal(nonPublicRange('2002:5db8:d822::1'), undefined, '6to4 of a public address');
    assert.equal(nonPublicRange('2001:0:5db8:d822::a2a2:2901'), undefined, 'Teredo with a public server and client');
    assert.equal(nonPublicRange('[::1]'), 'loopback', 'one pair of brackets around the address is dropped');
    assert.equal(nonPublicRange('[::1]]'), 'invalid', 'only that pair: anything else is not an address');
    for (const [addr, range] of [
      ['127.0.0.1', 'loopback'],
      ['::1', 'loopback'],
      ['10.0.0.1', 'private'],
      ['100.64.0.1', 'carrierGradeNat'],
      ['::ffff:10.0.0.1', 'private'],
      ['::10.0.0.1', 'ipv4Compatible address embedding 10.0.0.1, a private'], // ipaddr.js alone reads it as ::ffff:10.0.0.1
      ['::93.184.216.34', 'ipv4Compatible'],
      ['fe80::1%eth0', 'linkLocal'],
      ['not an address', 'invalid'],
    ]) {
      assert.equal(nonPublicRange(addr), range, addr);
    }
  });

  test('every non-public address form is refused when saved', async () => {
    for (const [url, range] of REFUSED_URLS) {
      const r = await s.request('POST', '/v1/webhooks', { token: seed.apiKey, body: { url } });
      assert.equal(r.status, 400, url);
      assert.equal(r.body.error.code, 'invalid_request');
      assert.match(r.body.error.message, new RegExp(`which is a ${escaped(range)} address;`), `${url}: ${r.body.error.message}`);
    }
    const count = await s.app.db
      .selectFrom('webhook_endpoints')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 0, 'nothing was saved');
  });

  test('NAT64, 6to4 and Teredo addresses of public IPv4 hosts are accepted', async () => {
    for (const url of ['http://[64:ff9b::93.184.216.34]/hook', 'http://[2002:5db8:d822::1]/hook', 'http://[2001:0:5db8:d822::a2a2:2901]/hook']) {
      const r = await s.request('POST', '/v1/webhooks', { token: seed.apiKey, body: { url } });
      assert.equal(r.status, 201, `${url}: ${JSON.stringify(r.body)}`);
      await s.request('DELETE', `/v1/webhooks/${r.body.id}`, { token: seed.apiKey });
    }
  });

  test('names are resolved: a private answer and a mixed answer are refused, a public one is accepted', async () => {
    answers.set('localhost.test', ['127.0.0.1', '::1']);
    answers.set('mixed.test', [PUBLIC, '10.0.0.7']);
    answers.set('mapped.test', ['::ffff:127.0.0.1']);
    answers.set('compatible.test', ['::93.184.216.34']);
    answers.set('public.test', [PUBLIC, '2606:4700:4700::1111']);
    for (const [host, pattern] of [
      ['localhost.test', /localhost\.test resolves to 127\.0\.0\.1, which is a loopback address/],
      ['mixed.test', /mixed\.test resolves to 10\.0\.0\.7, which is a private address/],
      ['mapped.test', /mapped\.test resolves to ::ffff:127\.0\.0\.1, which is a loopback address/],
      ['compatible.test', /compatible\.test resolves to ::93\.184\.216\.34, which is a ipv4Compatible address/],
      ['nowhere.test', /the host nowhere\.test does not resolve/],
    ] as const) {
      const r = await s.request('POST', '/v1/webhooks', { token: seed.apiKey, body: { url: `https://${host}/hook` } });
      assert.equal(r.status, 400, host);
      assert.match(r.body.error.message, pattern);
    }
    const ok = await s.request('POST', '/v1/webhooks', { token: seed.apiKey, body: { url: 'https://PUBLIC.test/hook#frag' } });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    assert.equal(ok.body.url, 'https://public.test/hook');
    await s.request('DELETE', `/v1/webhooks/${ok.body.id}`, { token: seed.apiKey });
  });

  test('only http and https, no credentials in the URL; updates are checked too', async () => {
    for (const url of [
      'ftp://public.test/x',
      'file:///etc/passwd',
      'gopher://public.test/',
      'javascript:alert(1)',
      'not a url',
      'https://user:pw@public.test/',
      'https://user@public.test/',
      'https://:pw@public.test/',
    ]) {
      const r = await s.request('POST', '/v1/webhooks', { token: seed.apiKey, body: { url } });
      assert.equal(r.status, 400, url);
    }
    const atLimit = `https://public.test/${'a'.repeat(URL_MAX_LENGTH - 'https://public.test/'.length)}`;
    assert.equal((await checkWebhookUrl({ lookup: s.app.lookup, allowPrivate: false }, atLimit)).length, URL_MAX_LENGTH);
    await assert.rejects(checkWebhookUrl({ lookup: s.app.lookup, allowPrivate: false }, `${atLimit}a`), /longer than 2048 characters/);
    const ok = await s.request('POST', '/v1/webhooks', { token: seed.apiKey, body: { url: 'https://public.test/hook' } });
    const patched = await s.request('PATCH', `/v1/webhooks/${ok.body.id}`, { token: seed.apiKey, body: { url: 'http://10.0.0.1/' } });
    assert.equal(patched.status, 400);
    const still = await s.request('GET', `/v1/webhooks/${ok.body.id}`, { token: seed.apiKey });
    assert.equal(still.body.url, 'https://public.test/hook');
    await s.request('DELETE', `/v1/webhooks/${ok.body.id}`, { token: seed.apiKey });
  });

  test('at delivery the name is resolved again: a public answer at save and 127.0.0.1 later is refused', async () => {
    const ws = await seedWorkspace(s.app);
    answers.set('rebind.test', [PUBLIC]);
    const r = await s.request('POST', '/v1/webhooks', { token: ws.apiKey, body: { url: `http://rebind.test:${rx.port}/rebind`, events: ['message.created'] } });
    assert.equal(r.status, 201);
    for (const later of [['127.0.0.1'], ['127.0.0.1', PUBLIC], ['::ffff:127.0.0.1']]) {
      answers.set('rebind.test', later);
      await emitMessage(s.app, ws.workspaceId, ws.inboxId);
    }
    await s.app.jobs.drain();
    const attempts = await s.app.db.selectFrom('webhook_attempts').selectAll().where('endpoint_id', '=', r.body.id).orderBy('started_at').execute();
    assert.equal(attempts.length, 3);
    for (const a of attempts) {
      assert.equal(a.outcome, 'failed');
      assert.match(a.error!, /^address refused: rebind\.test resolves to (127\.0\.0\.1|::ffff:127\.0\.0\.1), which is a loopback address/);
    }
    assert.equal(rx.received.filter((x) => x.path === '/rebind').length, 0, 'nothing reached the receiver');
  });

  test('the 10 s deadline covers name resolution too', async () => {
    const ws = await seedWorkspace(s.app);
    answers.set('slowdns.test', [PUBLIC]);
    const r = await s.request('POST', '/v1/webhooks', { token: ws.apiKey, body: { url: 'https://slowdns.test/hook', events: ['message.created'] } });
    assert.equal(r.status, 201);
    const plain = s.app.lookup;
    let asked = 0;
    s.app.lookup = (host) => (host === 'slowdns.test' ? (asked++, new Promise(() => {})) : plain(host));
    try {
      await emitMessage(s.app, ws.workspaceId, ws.inboxId);
      const started = Date.now();
      while (asked === 0 && Date.now() - started < 10_000) await new Promise((res) => setTimeout(res, 10));
      (s.app.clock as ManualClock).advance(10_000);
      await s.app.jobs.drain();
      const [a] = await s.app.db.selectFrom('webhook_attempts').selectAll().where('endpoint_id', '=', r.body.id).execute();
      assert.equal(a.outcome, 'failed');
      assert.equal(a.error, 'no complete answer within 10 s');
    } finally {
      s.app.lookup = plain;
    }
  });

  test('every non-public address a name resolves to is refused at delivery', async () => {
    const ws = await seedWorkspace(s.app);
    answers.set('every.test', [PUBLIC]);
    const r = await s.request('POST', '/v1/webhooks', { token: ws.apiKey, body: { url: `http://every.test:${rx.port}/every`, events: ['message.created'] } });
    assert.equal(r.status, 201);
    const forms = REFUSED_URLS.map(([url]) => new URL(url).hostname.replace(/^\[|\]$/g, ''));
    for (const address of forms) {
      answers.set('every.test', [address]);
      await emitMessage(s.app, ws.workspaceId, ws.inboxId);
      await s.app.jobs.drain();
    }
    const attempts = await s.app.db
      .selectFrom('webhook_attempts')
      .selectAll()
      .where('endpoint_id', '=', r.body.id)
      .orderBy('started_at')
      .orderBy('id')
      .execute();
    assert.equal(attempts.length, forms.length);
    for (const [i, a] of attempts.entries()) {
      assert.equal(a.outcome, 'failed');
      assert.match(a.error!, new RegExp(`^address refused: every\\.test resolves to ${escaped(forms[i])}, which is a ${escaped(REFUSED_URLS[i][1])} address;`));
    }
    assert.equal(rx.received.filter((x) => x.path === '/every').length, 0);
  });

  test('an address literal saved while private addresses were allowed is refused at delivery', async () => {
    const ws = await seedWorkspace(s.app);
    const now = iso(s.app.clock.now());
    const id = newId('wh');
    await s.app.db
      .insertInto('webhook_endpoints')
      .values({
        id,
        workspace_id: ws.workspaceId,
        url: `${rx.url}/literal`,
        events: JSON.stringify(['message.created']),
        inbox_id: null,
        include_notes: 0,
        secret_sealed: s.app.sealer.seal(newSigningSecret()),
        previous_secret_sealed: null,
        previous_secret_expires_at: null,
        disabled_at: null,
        disabled_reason: null,
        failing_since: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    await emitMessage(s.app, ws.workspaceId, ws.inboxId);
    await s.app.jobs.drain();
    const [a] = await s.app.db.selectFrom('webhook_attempts').selectAll().where('endpoint_id', '=', id).execute();
    assert.equal(a.outcome, 'failed');
    assert.match(a.error!, /^address refused: 127\.0\.0\.1, which is a loopback address/);
    assert.equal(rx.received.filter((x) => x.path === '/literal').length, 0);
  });

  test('SVC_WEBHOOK_ALLOW_PRIVATE lifts the restriction; proxies from the environment are never used', async () => {
    const proxy = await startReceiver(() => ({ status: 200, body: 'proxied' }));
    const saved = { HTTP_PROXY: process.env.HTTP_PROXY, http_proxy: process.env.http_proxy };
    process.env.HTTP_PROXY = proxy.url;
    process.env.http_proxy = proxy.url;
    const dev = await startTestServer({ clock: new ManualClock(), env: { SVC_WEBHOOK_ALLOW_PRIVATE: '1' } });
    try {
      const ws = await seedWorkspace(dev.app);
      const r = await dev.request('POST', '/v1/webhooks', { token: ws.apiKey, body: { url: `${rx.url}/dev` } });
      assert.equal(r.status, 201);
      await emitMessage(dev.app, ws.workspaceId, ws.inboxId);
      await dev.app.jobs.drain();
      assert.equal(rx.received.filter((x) => x.path === '/dev').length, 1);
      assert.equal(proxy.received.length, 0);
      assert.equal(await checkWebhookUrl({ lookup: dev.app.lookup, allowPrivate: true }, 'http://10.0.0.1/x'), 'http://10.0.0.1/x');
    } finally {
      process.env.HTTP_PROXY = saved.HTTP_PROXY;
      process.env.http_proxy = saved.http_proxy;
      if (saved.HTTP_PROXY === undefined) delete process.env.HTTP_PROXY;
      if (saved.http_proxy === undefined) delete process.env.http_proxy;
      await dev.stop();
      await proxy.close();
    }
  });
});
