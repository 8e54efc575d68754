// The API document is complete for client generators: redocly's recommended rules pass, every
// operation has a unique operationId and typed error answers, public operations say so, and
// `servers` names the server's public address.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createRoute, z } from '@hono/zod-openapi';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { operationIdFor } from '../../src/http/api-document.js';
import { bearer, jsonAnswer, jsonBody } from '../../src/http/openapi.js';
import { createServerApp } from '../../src/server/routes.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

function operations(doc: any) {
  const ops: { method: string; path: string; op: any }[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) for (const method of METHODS) if (item[method]) ops.push({ method, path, op: item[method] });
  return ops;
}

/** An operation that takes nothing and needs no credentials (GET /healthz) has no error to answer. */
const takesNothing = (op: any) => !op.requestBody && !(op.parameters?.length > 0) && op.security.length === 0;

/** The operation a redocly problem points at ("#/paths/~1v1~1realtime/get/responses"). */
function operationAt(doc: any, pointer: string | undefined) {
  const m = /^#\/paths\/([^/]+)\/([a-z]+)/.exec(pointer ?? '');
  return m ? doc.paths[m[1].replace(/~1/g, '/').replace(/~0/g, '~')]?.[m[2]] : undefined;
}

/** Redocly's warnings that are kept, and why: each is true of the operation it names. */
const ACCEPTED_WARNINGS: Record<string, (op: any) => boolean> = {
  // WebSocket routes (GET /v1/realtime, GET /v1/widget/realtime) succeed with 101, not a 2xx; the
  // sign-in providers' callback (GET /v1/migration-sign-in/callback) sends the browser on with 303.
  'operation-2xx-response': (op) => !!op?.responses['101'] || !!op?.responses['303'],
  // GET /healthz, /readyz, /v1/version and /v1/auth/methods take no input and no credentials: nothing to refuse.
  'operation-4xx-response': (op) => !!op && takesNothing(op),
};

describe('the API document (GET /v1/openapi.json)', () => {
  let s: TestServer;
  let doc: any;
  before(async () => {
    s = await startTestServer({ env: { SVC_PUBLIC_URL: 'https://support.acme.test/' } });
    doc = (await s.request('GET', '/v1/openapi.json')).body;
  });
  after(() => s.stop());

  test("passes redocly's recommended rules with no errors, and only the accepted warnings", async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: '/openapi.json', config });
    const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    assert.deepEqual(errors, []);
    const warnings = problems.filter((p) => p.severity === 'warn');
    const unexpected = warnings
      .filter((p) => !ACCEPTED_WARNINGS[p.ruleId]?.(operationAt(doc, p.location[0]?.pointer)))
      .map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    assert.deepEqual(unexpected, []);
    assert.ok(warnings.length <= 7, `${warnings.length} warnings`);
  });

  test('every operation has its own operationId, derived from method and path', () => {
    const ops = operations(doc);
    assert.ok(ops.length > 100, `${ops.length} operations`);
    const seen = new Map<string, string>();
    for (const { method, path, op } of ops) {
      assert.match(op.operationId ?? '', /^[a-z][A-Za-z0-9]*$/, `${method} ${path}`);
      assert.ok(!seen.has(op.operationId), `${method} ${path} and ${seen.get(op.operationId)} share ${op.operationId}`);
      seen.set(op.operationId, `${method} ${path}`);
    }
    assert.equal(doc.paths['/v1/contacts/{contactId}'].get.operationId, 'getContactsByContactId');
    assert.equal(doc.paths['/v1/contacts/{contactId}/merge'].post.operationId, 'postContactsByContactIdMerge');
    assert.equal(doc.paths['/healthz'].get.operationId, 'getHealthz');
    assert.equal(operationIdFor('delete', '/v1/contacts/by-external-id'), 'deleteContactsByExternalId');
  });

  test('every operation documents its error answers with the one Error body', () => {
    const schema = doc.components.schemas.Error;
    assert.deepEqual(schema.required, ['error']);
    assert.deepEqual(schema.properties.error.required.sort(), ['code', 'message']);
    for (const { method, path, op } of operations(doc)) {
      const errors = Object.keys(op.responses).filter((status) => /^4\d\d$/.test(status));
      if (!takesNothing(op)) assert.ok(errors.length > 0, `${method} ${path} documents no 4xx answer`);
      for (const status of errors) {
        assert.deepEqual(op.responses[status].content?.['application/json']?.schema, { $ref: '#/components/schemas/Error' }, `${method} ${path} ${status}`);
      }
      const secured = op.security.length > 0;
      if (secured) assert.ok(op.responses['401'] && op.responses['403'], `${method} ${path}: 401 and 403`);
      if (op.requestBody) assert.ok(op.responses['400'] && op.responses['413'] && op.responses['415'], `${method} ${path}: 400, 413 and 415`);
      if (path.includes('{')) assert.ok(op.responses['404'], `${method} ${path}: 404`);
    }
    // Errors a route names itself get the shared body too.
    assert.ok(doc.paths['/v1/auth/code'].post.responses['429'].headers['Retry-After']);
    assert.ok(doc.paths['/v1/broadcasts/{broadcastId}/schedule'].post.responses['422']);
    assert.ok(doc.paths['/v1/widget/sessions'].post.responses['429']);
  });

  test('public operations declare security: [] and the others the bearer scheme', () => {
    const publicOps = operations(doc)
      .filter(({ op }) => op.security.length === 0)
      .map(({ method, path }) => `${method} ${path}`);
    for (const expected of [
      'get /healthz',
      'get /readyz',
      'get /v1/version',
      'post /v1/auth/code',
      'post /v1/auth/verify',
      'get /v1/widget/config',
      'post /v1/widget/sessions',
      'post /v1/mailer/notifications',
      'post /v1/unsubscribe/{token}',
      'get /v1/unsubscribe/{token}',
    ]) {
      assert.ok(publicOps.includes(expected), expected);
    }
    assert.deepEqual(doc.paths['/v1/contacts'].post.security, [{ bearer: [] }]);
  });

  test('servers is SVC_PUBLIC_URL, or the address the document was asked from when that is unset', async () => {
    assert.deepEqual(doc.servers, [{ url: 'https://support.acme.test' }]);
    const plain = await startTestServer();
    try {
      const r = await plain.request('GET', '/v1/openapi.json');
      assert.deepEqual(r.body.servers, [{ url: plain.url }]);
    } finally {
      await plain.stop();
    }
  });

  test('a route added later gets its operationId, security and error answers without saying so', async () => {
    const app = createServerApp(s.app);
    app.openapi(
      createRoute({
        method: 'post',
        path: '/v1/things/{thingId}/polish',
        request: { params: z.object({ thingId: z.string() }), body: jsonBody(z.object({ shine: z.number() })) },
        security: bearer,
        responses: { 200: jsonAnswer(z.object({ ok: z.boolean() }), 'polished'), 429: { description: 'too much polishing' } },
      }),
      (c) => c.json({ ok: true }, 200),
    );
    app.openapi(
      createRoute({
        method: 'get',
        path: '/v1/things/open',
        request: { query: z.object({ color: z.string().optional() }) },
        responses: { 200: jsonAnswer(z.object({ ok: z.boolean() }), 'open') },
      }),
      (c) => c.json({ ok: true }, 200),
    );
    const added = (await (await app.request('/v1/openapi.json')).json()) as any;
    const polish = added.paths['/v1/things/{thingId}/polish'].post;
    assert.equal(polish.operationId, 'postThingsByThingIdPolish');
    assert.deepEqual(Object.keys(polish.responses).sort(), ['200', '400', '401', '403', '404', '409', '413', '415', '429']);
    assert.equal(polish.responses['429'].description, 'too much polishing');
    assert.deepEqual(polish.responses['429'].content['application/json'].schema, { $ref: '#/components/schemas/Error' });
    const open = added.paths['/v1/things/open'].get;
    assert.deepEqual(open.security, []);
    assert.equal(open.operationId, 'getThingsOpen');
    assert.deepEqual(Object.keys(open.responses).sort(), ['200', '400']);
    // And its JSON body goes through the central check.
    const res = await app.request('/v1/things/t1/polish', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"shine":1,"x":"\\ud800"}',
    });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as any).error.issues[0].path, 'x');
  });
});
