import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createChatChannel } from '../../src/channels/service.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { type ClientAddressSettings, parseTrustedProxies, resolveClientAddress } from '../../src/platform/client-address.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { runSvc, startTestServer, type TestEnv, type TestServer, testEnv } from '../helpers/server.js';

const ORIGIN = 'https://shop.example.com';

describe('client address (SVC_TRUSTED_PROXIES)', () => {
  const xff = (list: string): ClientAddressSettings => ({ trustedProxies: parseTrustedProxies(list), proxyHeader: 'x-forwarded-for' });
  const fwd = (list: string): ClientAddressSettings => ({ trustedProxies: parseTrustedProxies(list), proxyHeader: 'forwarded' });

  test('without trusted proxies the peer is the client, whatever the headers say', () => {
    assert.equal(resolveClientAddress(xff(''), '198.51.100.7', '203.0.113.1'), '198.51.100.7');
    assert.equal(resolveClientAddress(xff(''), '::ffff:198.51.100.7', undefined), '198.51.100.7');
  });

  test('a peer that is not a trusted proxy is the client; its header is not believed', () => {
    assert.equal(resolveClientAddress(xff('10.0.0.0/8'), '198.51.100.7', '203.0.113.1'), '198.51.100.7');
  });

  test('behind trusted proxies the rightmost untrusted hop wins; hops the client wrote are ignored', () => {
    const s = xff('10.0.0.0/8, 192.168.1.1');
    assert.equal(resolveClientAddress(s, '10.1.2.3', '203.0.113.1'), '203.0.113.1');
    // The client sent "X-Forwarded-For: 1.1.1.1"; the proxies appended what they saw.
    assert.equal(resolveClientAddress(s, '10.1.2.3', '1.1.1.1, 203.0.113.1, 192.168.1.1'), '203.0.113.1');
    assert.equal(resolveClientAddress(s, '::ffff:10.1.2.3', '1.1.1.1,203.0.113.1'), '203.0.113.1');
    // Every hop trusted: the leftmost is the client.
    assert.equal(resolveClientAddress(s, '10.1.2.3', '10.9.9.9, 192.168.1.1'), '10.9.9.9');
    // No header: the proxy itself.
    assert.equal(resolveClientAddress(s, '10.1.2.3', undefined), '10.1.2.3');
    // A hop that is no address stops at the trusted hop right of it.
    assert.equal(resolveClientAddress(s, '10.1.2.3', '203.0.113.1, unknown, 192.168.1.1'), '192.168.1.1');
    assert.equal(resolveClientAddress(s, '10.1.2.3', 'garbage'), '10.1.2.3');
  });

  test('IPv6 ranges and ports', () => {
    const s = xff('2001:db8::/32');
    assert.equal(resolveClientAddress(s, '2001:db8::5', '2001:db8:1::9, 2a00:1450::1'), '2a00:1450::1');
    assert.equal(resolveClientAddress(s, '2001:db8::5', '203.0.113.1:4711'), '203.0.113.1');
    assert.equal(resolveClientAddress(s, '2001:db8::5', '[2a00:1450::1]:443'), '2a00:1450::1');
  });

  test('Forwarded (RFC 7239) when SVC_TRUSTED_PROXY_HEADER=forwarded; X-Forwarded-For is then not read', () => {
    const s = fwd('10.0.0.0/8');
    assert.equal(resolveClientAddress(s, '10.0.0.1', 'for=1.1.1.1, for=203.0.113.60;proto=https;by=10.0.0.1'), '203.0.113.60');
    assert.equal(resolveClientAddress(s, '10.0.0.1', 'for="[2001:db8:cafe::17]:4711"'), '2001:db8:cafe::17');
    assert.equal(resolveClientAddress(s, '10.0.0.1', 'For="10.0.0.8", for=203.0.113.9;by="a,b"'), '203.0.113.9');
    assert.equal(resolveClientAddress(s, '10.0.0.1', 'for=_hidden'), '10.0.0.1');
    assert.equal(resolveClientAddress(s, '10.0.0.1', 'proto=https'), '10.0.0.1');
  });

  test('the settings are checked at start and name the bad entry', () => {
    assert.equal(loadConfig({}).clientAddress.trustedProxies.length, 0);
    assert.equal(loadConfig({ SVC_TRUSTED_PROXIES: '10.0.0.0/8 192.168.0.1,::1' }).clientAddress.trustedProxies.length, 3);
    assert.equal(loadConfig({}).clientAddress.proxyHeader, 'x-forwarded-for');
    assert.equal(loadConfig({ SVC_TRUSTED_PROXY_HEADER: 'Forwarded' }).clientAddress.proxyHeader, 'forwarded');
    for (const bad of ['10.0.0.0/33', 'proxy.example.com', '10.0.0.1/8x', '300.1.1.1']) {
      assert.throws(
        () => loadConfig({ SVC_TRUSTED_PROXIES: `10.0.0.1, ${bad}` }),
        (e: unknown) => e instanceof ConfigError && e.message.includes('SVC_TRUSTED_PROXIES') && e.message.includes(bad),
        bad,
      );
    }
    assert.throws(
      () => loadConfig({ SVC_TRUSTED_PROXY_HEADER: 'x-real-ip' }),
      (e: unknown) => e instanceof ConfigError && e.message.includes('SVC_TRUSTED_PROXY_HEADER'),
    );
  });
});

describe('client address at the command line', () => {
  let te: TestEnv;
  before(async () => {
    te = await testEnv();
  });
  after(() => te.cleanup());

  test('a bad SVC_TRUSTED_PROXIES stops every command and serve with one line and a non-zero exit', async () => {
    for (const args of [['migrate', 'status'], ['serve'], ['inbox', 'list', '--workspace', 'x']]) {
      const r = await runSvc(args, { env: { ...te.env, SVC_TRUSTED_PROXIES: '10.0.0.0/99' } });
      assert.notEqual(r.code, 0, args.join(' '));
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, /SVC_TRUSTED_PROXIES.*10\.0\.0\.0\/99/);
      assert.equal(r.stdout, '');
    }
  });
});

describe('per-address limits and the request log behind a proxy', () => {
  async function widgetServer(env: Record<string, string>) {
    const s = await startTestServer({ env });
    const seed = await seedWorkspace(s.app);
    const channel = await createChatChannel(s.app, {
      workspaceId: seed.workspaceId,
      inboxId: seed.inboxId,
      name: 'Widget',
      origins: [ORIGIN],
      allowAnonymous: true,
    });
    const open = (forwardedFor: string) =>
      s.request('POST', '/v1/widget/sessions', { body: { public_key: channel.public_key }, headers: { origin: ORIGIN, 'x-forwarded-for': forwardedFor } });
    return { s, open };
  }

  let trusted: Awaited<ReturnType<typeof widgetServer>>;
  let untrusted: Awaited<ReturnType<typeof widgetServer>>;
  before(async () => {
    trusted = await widgetServer({ SVC_TRUSTED_PROXIES: '127.0.0.1' });
    untrusted = await widgetServer({});
  });
  after(async () => {
    await trusted.s.stop();
    await untrusted.s.stop();
  });

  test('behind a trusted proxy each visitor has their own budget of new sessions', async () => {
    for (let i = 0; i < 20; i++) assert.equal((await trusted.open('203.0.113.1')).status, 201);
    const refused = await trusted.open('203.0.113.1');
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, 'rate_limited');
    // Another visitor behind the same proxy is not blocked, even if they claim an address first.
    assert.equal((await trusted.open('203.0.113.1, 203.0.113.2')).status, 201);
    assert.equal((await trusted.open('203.0.113.3')).status, 201);
    const line = [...trusted.s.logs].reverse().find((l) => l.msg === 'request' && l.route === '/v1/widget/sessions');
    assert.equal(line?.client, '203.0.113.3');
  });

  test('without SVC_TRUSTED_PROXIES the header changes nothing: the connection’s address is counted and logged', async () => {
    for (let i = 0; i < 20; i++) assert.equal((await untrusted.open(`203.0.113.${i + 1}`)).status, 201);
    assert.equal((await untrusted.open('198.51.100.99')).status, 429);
    const line = [...untrusted.s.logs].reverse().find((l) => l.msg === 'request' && l.route === '/v1/widget/sessions');
    assert.equal(line?.client, '127.0.0.1');
  });
});
