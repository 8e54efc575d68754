// Hostile input never gets a 5xx: deeply nested JSON, strings that are not Unicode, malformed or
// oversize bodies and wrong content types are refused with a clear 4xx and change nothing. The
// walker calls every operation of /v1/openapi.json with such bodies, with plausible and implausible
// ids, as an owner session, an all-scope API key, a widget visitor and without credentials.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/api-keys/service.js';
import { createSession } from '../../src/people/service.js';
import { newId } from '../../src/platform/ids.js';
import { FREE_JSON_MAX_DEPTH } from '../../src/platform/json-limits.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** `{"k":{"k":…{}}}` with `levels` objects. */
function nestedObject(levels: number, key = 'k'): unknown {
  let v: unknown = {};
  for (let i = 1; i < levels; i++) v = { [key]: v };
  return v;
}
/** The same as text: JSON.stringify itself cannot write 10,000 levels. */
const nestedObjectText = (levels: number) => '{"k":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1);
const deepArrayText = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
const deepObjectText = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);

describe('hostile input', () => {
  let s: TestServer;
  let seed: Seed;
  const post = (path: string, raw: string | Buffer, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    s.request('POST', path, { token: seed.apiKey, raw, headers });
  const contactCount = async () => (await s.request('GET', '/v1/contacts?limit=200', { token: seed.apiKey })).body.data.length;

  before(async () => {
    s = await startTestServer();
    seed = await seedWorkspace(s.app);
  });
  after(() => s.stop());

  describe('deeply nested JSON', () => {
    test('contact attributes nested 10,000 deep: 400 invalid_request with the path, nothing stored', async () => {
      const before = await contactCount();
      const r = await post('/v1/contacts', `{"name":"Deep","attributes":{"plan":${nestedObjectText(10_000)}}}`);
      assert.equal(r.status, 400, JSON.stringify(r.body).slice(0, 300));
      assert.equal(r.body.error.code, 'invalid_request');
      assert.match(r.body.error.issues[0].path, /^attributes\.plan(\.k)*$/);
      assert.equal(await contactCount(), before);
    });

    test(`attributes nest at most ${FREE_JSON_MAX_DEPTH} levels: 3,000 and ${FREE_JSON_MAX_DEPTH + 1} are refused at the offending field, ${FREE_JSON_MAX_DEPTH} is stored`, async () => {
      const r3000 = await s.request('POST', '/v1/contacts', { token: seed.apiKey, body: { attributes: { plan: nestedObject(3_000) } } });
      assert.equal(r3000.status, 400);
      // The attributes object is level 1, so "plan" holding 8 levels makes 9.
      const over = await s.request('POST', '/v1/contacts', { token: seed.apiKey, body: { attributes: { ok: 1, plan: nestedObject(FREE_JSON_MAX_DEPTH) } } });
      assert.equal(over.status, 400);
      assert.deepEqual(over.body.error.issues, [
        { path: `attributes.plan${'.k'.repeat(FREE_JSON_MAX_DEPTH - 1)}`, message: `objects and arrays may nest at most ${FREE_JSON_MAX_DEPTH} levels deep` },
      ]);
      const arrays = await s.request('POST', '/v1/contacts', { token: seed.apiKey, body: { attributes: { tags: [[[[[[[[['x']]]]]]]]] } } });
      assert.equal(arrays.status, 400);
      assert.equal(arrays.body.error.issues[0].path, 'attributes.tags.0.0.0.0.0.0.0');

      const fits = { plan: nestedObject(FREE_JSON_MAX_DEPTH - 1) };
      const ok = await s.request('POST', '/v1/contacts', { token: seed.apiKey, body: { attributes: fits } });
      assert.equal(ok.status, 201);
      const read = await s.request('GET', `/v1/contacts/${ok.body.id}`, { token: seed.apiKey });
      assert.deepEqual(read.body.attributes, fits);

      const patch = await s.request('PATCH', `/v1/contacts/${ok.body.id}`, { token: seed.apiKey, body: { attributes: { more: nestedObject(50) } } });
      assert.equal(patch.status, 400);
      assert.match(patch.body.error.issues[0].path, /^attributes\.more/);
      assert.deepEqual((await s.request('GET', `/v1/contacts/${ok.body.id}`, { token: seed.apiKey })).body.attributes, fits);
    });

    test('feedback metadata has the same limit', async () => {
      const r = await s.request('POST', '/v1/feedback', {
        token: seed.apiKey,
        body: { inbox_id: seed.inboxId, body: 'hi', metadata: { page: { a: nestedObject(20) } } },
      });
      assert.equal(r.status, 400);
      assert.match(r.body.error.issues[0].path, /^metadata\.page\.a(\.k)+$/);
    });

    test('bodies nested 100,000 deep are refused by the body reader before any route code runs', async () => {
      for (const raw of [deepArrayText(100_000), deepObjectText(100_000), `{"name":"x","attributes":{"a":${deepArrayText(100_000)}}}`]) {
        const r = await post('/v1/contacts', raw);
        assert.equal(r.status, 400);
        assert.equal(r.body.error.code, 'invalid_request');
        assert.equal(r.body.error.issues.length, 1);
      }
      const r = await post('/v1/contacts', `{"attributes":{"a":${deepArrayText(100_000)}}}`);
      assert.match(r.body.error.issues[0].path, /^attributes\.a(\.0)+$/);
      assert.ok(!s.logs.some((l) => l.level === 'error'), 'no request failed');
    });

    test('malformed JSON, wrong content types and oversize bodies are clean 4xx', async () => {
      for (const raw of ['{"name":', "{'name':'x'}", 'nul', '{"name":"x"}}', '\u0000']) {
        const r = await post('/v1/contacts', raw);
        assert.equal(r.status, 400, raw);
        assert.equal(r.body.error.code, 'invalid_request');
      }
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml']) {
        const r = await post('/v1/contacts', '{"name":"x"}', { 'content-type': type });
        assert.equal(r.status, 415, type);
        assert.equal(r.body.error.code, 'unsupported_media_type');
      }
      const big = await post('/v1/contacts', JSON.stringify({ name: 'x', attributes: { a: 'y'.repeat(2 * 1024 * 1024) } }));
      assert.equal(big.status, 413);
      assert.equal(big.body.error.code, 'too_large');
    });
  });

  describe('strings that are not valid Unicode', () => {
    test('a lone surrogate is refused with 400 and the path, and nothing is stored', async () => {
      const before = await contactCount();
      const r = await post('/v1/contacts', '{"name":"\\ud800"}');
      assert.equal(r.status, 400);
      assert.equal(r.body.error.code, 'invalid_request');
      assert.deepEqual(
        r.body.error.issues.map((i: { path: string }) => i.path),
        ['name'],
      );
      const low = await post('/v1/contacts', '{"name":"ok","attributes":{"tags":["a","x\\udc00y"]}}');
      assert.equal(low.status, 400);
      assert.equal(low.body.error.issues[0].path, 'attributes.tags.1');
      const key = await post('/v1/contacts', '{"attributes":{"\\ud83d":1}}');
      assert.equal(key.status, 400);
      assert.equal(key.body.error.issues[0].path, 'attributes.\ufffd');
      assert.equal(await contactCount(), before);
    });

    test('every JSON route refuses them: feedback, workspace, widget', async () => {
      const feedback = await post('/v1/feedback', `{"inbox_id":"${seed.inboxId}","body":"b\\udfffad"}`);
      assert.equal(feedback.status, 400);
      assert.equal(feedback.body.error.issues[0].path, 'body');
      const ws = await s.request('PATCH', '/v1/workspace', {
        token: seed.ownerToken,
        raw: '{"name":"\\ud800"}',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(ws.status, 400);
      assert.equal(ws.body.error.issues[0].path, 'name');
      const widget = await s.request('POST', '/v1/widget/sessions', {
        raw: '{"public_key":"svc_pk_\\udbff"}',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(widget.status, 400);
      assert.equal(widget.body.error.issues[0].path, 'public_key');
    });

    test('U+0000, which Postgres text cannot hold, is refused in bodies and URLs on both databases', async () => {
      const r = await post('/v1/feedback', `{"inbox_id":"${seed.inboxId}","body":"nul\\u0000here","subject":"s"}`);
      assert.equal(r.status, 400);
      assert.equal(r.body.error.issues[0].path, 'body');
      const id = await s.request('GET', '/v1/contacts/ct_%00', { token: seed.apiKey });
      assert.equal(id.status, 400);
      assert.equal(id.body.error.code, 'invalid_request');
      const query = await s.request('GET', '/v1/conversations?inbox_id=%00', { token: seed.apiKey });
      assert.equal(query.status, 400);
    });

    test('bytes that are not UTF-8 are refused rather than stored as U+FFFD', async () => {
      const r = await post('/v1/contacts', Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe, 0xed, 0xa0, 0x80]), Buffer.from('"}')]));
      assert.equal(r.status, 400);
      assert.match(r.body.error.message, /UTF-8/);
    });

    test('well-formed text, pairs of surrogates included, is stored as sent', async () => {
      const r = await post('/v1/contacts', '{"name":"Zoë \\ud83d\\ude00 😀","attributes":{"emoji":"\\ud83c\\udf89"}}');
      assert.equal(r.status, 201);
      assert.equal(r.body.name, 'Zoë 😀 😀');
      const read = await s.request('GET', `/v1/contacts/${r.body.id}`, { token: seed.apiKey });
      assert.equal(read.body.name, 'Zoë 😀 😀');
      assert.equal(read.body.attributes.emoji, '🎉');
    });
  });

  test('walking every operation with hostile input never gets a 5xx', async (t) => {
    const doc = (await s.request('GET', '/v1/openapi.json')).body;
    const w = await seedWorkspace(s.app);
    const spareKey = (await createApiKey(s.app, { workspaceId: w.workspaceId, name: 'spare' })).key;
    const chat = await s.request('POST', '/v1/channels', {
      token: w.apiKey,
      body: { kind: 'chat', inbox_id: w.inboxId, name: 'Chat', origins: ['https://shop.test'], allow_anonymous: true },
    });
    assert.equal(chat.status, 201);
    const visitor = await s.request('POST', '/v1/widget/sessions', { body: { public_key: chat.body.public_key }, headers: { origin: 'https://shop.test' } });
    assert.equal(visitor.status, 201);
    const contact = await s.request('POST', '/v1/contacts', { token: w.apiKey, body: { name: 'Walker', emails: ['walker@example.com'] } });
    const feedback = await s.request('POST', '/v1/feedback', {
      token: w.apiKey,
      body: { inbox_id: w.inboxId, body: 'hello', contact: { email: 'walker@example.com' } },
    });
    assert.equal(feedback.status, 201);

    // Real ids where the walk can make them cheaply, well-formed unknown ones otherwise.
    const plausible: Record<string, string> = {
      inboxId: w.inboxId,
      contactId: contact.body.id,
      conversationId: feedback.body.conversation.id,
      messageId: feedback.body.message.id,
      channelId: chat.body.id,
      keyId: spareKey.id,
      webhookId: newId('wh'),
      deliveryId: newId('dlv'),
      broadcastId: newId('bc'),
      migrationId: newId('mig'),
      attachmentId: newId('att'),
      subscriptionId: newId('push'),
      token: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      part: '1',
    };
    const implausible = ['x', 'a'.repeat(5000), '%00', '..%2F..%2Fetc', '%ED%A0%80', '%FF%FE'];

    const huge = 'h'.repeat(300_000);
    const bodiesFor = (op: any): { raw: string | Buffer; type?: string; name: string }[] => {
      const schema = op.requestBody?.content?.['application/json']?.schema;
      const props = Object.keys(schema?.properties ?? {}).concat(schema?.oneOf?.flatMap((o: any) => Object.keys(o.properties ?? {})) ?? []);
      const names = props.length ? [...new Set(props)] : ['name'];
      const each = (v: unknown) => JSON.stringify(Object.fromEntries(names.map((n) => [n, v])));
      const eachRaw = (text: string) => `{${names.map((n) => `${JSON.stringify(n)}:${text}`).join(',')}}`;
      return [
        { name: 'empty object', raw: '{}' },
        { name: 'deep array', raw: deepArrayText(100_000) },
        { name: 'deep object', raw: deepObjectText(100_000) },
        { name: 'every field deep', raw: eachRaw(deepArrayText(3_000)) },
        { name: 'every field 10 deep', raw: each(nestedObject(10)) },
        { name: 'every field huge', raw: JSON.stringify(Object.fromEntries(names.map((n) => [n, huge.slice(0, Math.floor(900_000 / names.length))]))) },
        { name: 'every field number', raw: each(1e308) },
        { name: 'every field negative', raw: each(-1) },
        { name: 'every field array', raw: each(['x', 1, null]) },
        { name: 'every field object', raw: each({ x: 1 }) },
        { name: 'every field null', raw: each(null) },
        { name: 'every field true', raw: each(true) },
        { name: 'every field lone surrogate', raw: eachRaw('"\\ud800"') },
        { name: 'every field empty string', raw: each('') },
        { name: 'every field NUL', raw: each('a\u0000b') },
        { name: 'null', raw: 'null' },
        { name: 'string', raw: '"x"' },
        { name: 'number', raw: '12345' },
        { name: 'array', raw: '[]' },
        { name: 'malformed', raw: '{"a":' },
        { name: 'empty', raw: '' },
        { name: 'not UTF-8', raw: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]) },
        { name: 'proto keys', raw: '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}' },
        { name: 'text/plain', raw: each('x'), type: 'text/plain' },
        { name: 'form', raw: 'a=1&b=2', type: 'application/x-www-form-urlencoded' },
        { name: 'multipart', raw: '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--\r\n', type: 'multipart/form-data; boundary=x' },
        { name: 'no content type', raw: each('x'), type: '' },
        { name: 'oversize', raw: JSON.stringify({ name: 'o'.repeat(1_100_000) }) },
      ];
    };

    const failures: string[] = [];
    let requests = 0;
    // One connection per request (agent: false): each hostile request stands alone, whatever the
    // one before it left unread.
    const send = (method: string, target: string, headers: Record<string, string>, body?: string | Buffer) =>
      new Promise<{ status: number; type: string; text: string }>((resolve, reject) => {
        const req = http.request(s.url + target, { method, headers, agent: false }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), text: Buffer.concat(chunks).toString() }),
          );
          res.on('error', reject);
        });
        // The server may answer (and close) before it has read a body it does not want.
        req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error)));
        req.end(body);
      });
    const call = async (
      label: string,
      method: string,
      path: string,
      opts: { token?: string; raw?: string | Buffer; type?: string; query?: string; secured: boolean },
    ) => {
      const headers: Record<string, string> = {};
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      if (opts.raw !== undefined && opts.type !== '') headers['content-type'] = opts.type ?? 'application/json';
      if (path.startsWith('/v1/widget')) headers.origin = 'https://shop.test';
      requests++;
      const target = `${method.toUpperCase()} ${path}${opts.query ?? ''}`.slice(0, 160);
      let res: { status: number; type: string; text: string };
      try {
        res = await send(method.toUpperCase(), path + (opts.query ?? ''), headers, opts.raw);
      } catch (error) {
        failures.push(`${label}: ${target}: ${(error as Error).message}`);
        return;
      }
      if (res.status >= 500) failures.push(`${label}: ${target} → ${res.status} ${res.text.slice(0, 200)}`);
      else if (res.status >= 400 && res.type.includes('json')) {
        const body = JSON.parse(res.text);
        if (typeof body?.error?.code !== 'string' || typeof body.error.message !== 'string')
          failures.push(`${label}: ${target} → ${res.status} without the error shape: ${res.text.slice(0, 200)}`);
      } else if (res.status < 300 && opts.secured && !opts.token)
        failures.push(`${label}: ${target} → ${res.status} without credentials, but it declares security`);
    };

    const ops: { method: string; path: string; op: any }[] = [];
    for (const [path, item] of Object.entries<any>(doc.paths))
      for (const method of ['get', 'put', 'post', 'patch', 'delete']) if (item[method]) ops.push({ method, path, op: item[method] });
    // What ends credentials or data runs last, the workspace deletion and account deletion at the very end.
    const rank = ({ method, path }: { method: string; path: string }) =>
      path === '/v1/workspace' && method === 'delete'
        ? 4
        : path === '/v1/me' && method === 'delete'
          ? 5
          : path === '/v1/auth/signout' || method === 'delete'
            ? 3
            : 0;
    ops.sort((a, b) => rank(a) - rank(b));

    const walked = new Set<string>();
    for (const { method, path, op } of ops) {
      walked.add(`${method} ${path}`);
      const secured = op.security.length > 0;
      const params = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      const fill = (value: (name: string) => string) => path.replace(/\{([^}]+)\}/g, (_, name: string) => value(name));
      const plausiblePath = fill((name) => plausible[name] ?? newId('wh'));
      const owner = (await createSession(s.app, w.ownerId)).token;
      const credentials: [string, string | undefined][] = [
        ['owner', owner],
        ['api key', w.apiKey],
        ['none', undefined],
      ];
      if (path.startsWith('/v1/widget')) credentials.push(['visitor', visitor.body.token]);
      const takesBody = !!op.requestBody || method !== 'get';
      const bodies = takesBody ? bodiesFor(op) : [];

      for (const [who, token] of credentials) {
        // Plausible ids with each credential; implausible ones as the owner.
        for (const id of params.length && who === 'owner' ? [null, ...implausible] : [null]) {
          const p = id === null ? plausiblePath : fill((name) => (name === params[params.length - 1] ? id : (plausible[name] ?? 'x')));
          await call(`${who} ids`, method, p, { token, secured, ...(takesBody ? { raw: '{}' } : {}) });
        }
        // Every hostile body as the owner; the body reader's own cases with the other credentials.
        for (const body of bodies) {
          if (
            who !== 'owner' &&
            !['deep array', 'every field deep', 'every field lone surrogate', 'every field NUL', 'not UTF-8', 'malformed', 'no content type'].includes(
              body.name,
            )
          )
            continue;
          await call(`${who} ${body.name}`, method, plausiblePath, { token, secured, raw: body.raw, type: body.type });
        }
      }
      // Hostile query values in every declared query parameter.
      const queryNames = (op.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => p.name as string);
      if (queryNames.length) {
        for (const value of ['q'.repeat(5000), '-1', '1e309', '%FF', '%00', '%ED%A0%80', '%5B%5D', '99999999999999999999']) {
          await call('owner query', method, plausiblePath, {
            token: owner,
            secured,
            query: '?' + queryNames.map((n: string) => `${n}=${value}`).join('&'),
            ...(takesBody ? { raw: '{}' } : {}),
          });
        }
      }
    }
    assert.equal(walked.size, ops.length);
    t.diagnostic(`${ops.length} operations, ${requests} requests`);
    assert.ok(ops.length > 100 && requests > 2000, `${ops.length} operations, ${requests} requests`);
    assert.deepEqual(failures, []);
    const failed = s.logs
      .filter((l) => l.level === 'error')
      .map((l) => `${l.msg} ${l.method} ${l.path} ${String((l as any).error?.message ?? (l as any).error ?? '')}`);
    assert.deepEqual(failed, []);
  });
});
