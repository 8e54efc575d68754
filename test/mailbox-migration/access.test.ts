// Who may call the migration endpoints, checked on every one of them: the routes are read from the
// server's own OpenAPI document (every path under /v1/migrations, and the forwarding-address rotate
// route, which the spec lists among the migration endpoints), so a new route is covered at once.
// Agents, keys without migrations:manage and inbox-limited keys get 403; owners, admins and keys
// with the scope and no inbox limit never do.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/api-keys/service.js';
import { SCOPES } from '../../src/auth/access.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

interface Route {
  method: string;
  path: string;
  operation: any;
}

/** A value the schema accepts (the smallest one), so that a refusal can only come from authorization. */
function sampleOf(schema: any): unknown {
  if (!schema) return undefined;
  if (schema.example !== undefined) return schema.example;
  if (schema.enum) return schema.enum[0];
  if (schema.anyOf) return sampleOf(schema.anyOf.find((s: any) => s.type !== 'null') ?? schema.anyOf[0]);
  if (schema.oneOf) return sampleOf(schema.oneOf[0]);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'object':
      return Object.fromEntries((schema.required ?? []).map((name: string) => [name, sampleOf(schema.properties?.[name])]));
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => sampleOf(schema.items));
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return false;
    case 'string':
      if (schema.format === 'email') return 'someone@example.com';
      if (schema.format === 'binary') return 'x';
      return 'x'.repeat(Math.max(schema.minLength ?? 1, 3));
    default:
      return null;
  }
}

function migrationRoutes(doc: any): Route[] {
  const routes: Route[] = [];
  for (const [path, ops] of Object.entries<any>(doc.paths)) {
    if (!(path === '/v1/migrations' || path.startsWith('/v1/migrations/') || path === '/v1/channels/{channelId}/forwarding-address/rotate')) continue;
    for (const [method, operation] of Object.entries<any>(ops)) routes.push({ method: method.toUpperCase(), path, operation });
  }
  // DELETE last, so that the migration is still there for the other routes.
  return routes.sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
}

describe('migration endpoints: who may call them', () => {
  let s: TestServer;
  let seed: Seed;
  let routes: Route[];
  let channelId: string;

  before(async () => {
    s = await startTestServer({ env: { SVC_FORWARDING_DOMAIN: 'in.fwd.example' } });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    channelId = (await seedEmailChannel(s.app, seed)).id;
    routes = migrationRoutes((await s.request('GET', '/v1/openapi.json')).body);
  });
  after(() => s.stop());

  const newMigration = async () => {
    const r = await s.request('POST', '/v1/migrations', { token: seed.apiKey, body: { provider: 'export_file' } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.id as string;
  };

  const call = (route: Route, token: string, migrationId: string) => {
    const params: any[] = route.operation.parameters ?? [];
    let url = route.path.replace('{migrationId}', migrationId).replace('{channelId}', channelId);
    for (const p of params.filter((p) => p.in === 'path' && url.includes(`{${p.name}}`))) url = url.replace(`{${p.name}}`, String(sampleOf(p.schema)));
    const query = params.filter((p) => p.in === 'query' && p.required).map((p) => `${p.name}=${encodeURIComponent(String(sampleOf(p.schema)))}`);
    if (query.length) url += `?${query.join('&')}`;
    const headers: Record<string, string> = {};
    for (const p of params.filter((p) => p.in === 'header' && p.required)) headers[p.name] = String(sampleOf(p.schema));
    const content = route.operation.requestBody?.content ?? {};
    if (content['application/json']) return s.request(route.method, url, { token, headers, body: sampleOf(content['application/json'].schema) });
    const [type] = Object.keys(content);
    if (type) return s.request(route.method, url, { token, headers: { ...headers, 'content-type': type }, raw: 'x' });
    return s.request(route.method, url, { token, headers });
  };

  test('the document lists every migration endpoint of the spec', () => {
    const listed = new Set(routes.map((r) => `${r.method} ${r.path}`));
    for (const expected of [
      'GET /v1/migrations/presets',
      'POST /v1/migrations/detect',
      'GET /v1/migrations',
      'POST /v1/migrations',
      'GET /v1/migrations/{migrationId}',
      'PATCH /v1/migrations/{migrationId}',
      'DELETE /v1/migrations/{migrationId}',
      'PUT /v1/migrations/{migrationId}/credentials',
      'GET /v1/migrations/{migrationId}/upload',
      'POST /v1/migrations/{migrationId}/upload/parts/{part}',
      'POST /v1/migrations/{migrationId}/upload/complete',
      'POST /v1/migrations/{migrationId}/test',
      'GET /v1/migrations/{migrationId}/folders',
      'POST /v1/migrations/{migrationId}/scan',
      'GET /v1/migrations/{migrationId}/preview',
      'POST /v1/migrations/{migrationId}/start',
      'POST /v1/migrations/{migrationId}/pause',
      'POST /v1/migrations/{migrationId}/resume',
      'POST /v1/migrations/{migrationId}/cancel',
      'POST /v1/migrations/{migrationId}/retry',
      'GET /v1/migrations/{migrationId}/errors',
      'POST /v1/migrations/{migrationId}/probe',
      'POST /v1/migrations/{migrationId}/finish',
      'POST /v1/migrations/{migrationId}/remove-history',
      'POST /v1/channels/{channelId}/forwarding-address/rotate',
    ]) {
      assert.ok(listed.has(expected), `${expected} is in /v1/openapi.json`);
    }
  });

  test('agents, keys without migrations:manage and inbox-limited keys get 403 on every route, and nothing changes', async () => {
    const migrationId = await newMigration();
    const channelBefore = await s.request('GET', `/v1/channels/${channelId}`, { token: seed.apiKey });
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    const { secret: withoutScope } = await createApiKey(s.app, {
      workspaceId: seed.workspaceId,
      name: 'no-migrations',
      scopes: SCOPES.filter((x) => x !== 'migrations:manage'),
    });
    const { secret: inboxLimited } = await createApiKey(s.app, {
      workspaceId: seed.workspaceId,
      name: 'limited',
      scopes: [...SCOPES],
      inboxIds: [seed.inboxId],
    });
    const callers = { agent: agent.token, 'key without migrations:manage': withoutScope, 'inbox-limited key': inboxLimited };
    for (const route of routes) {
      for (const [who, token] of Object.entries(callers)) {
        const r = await call(route, token, migrationId);
        assert.equal(r.status, 403, `${who}: ${route.method} ${route.path} answered ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
        assert.equal(r.body.error.code, 'forbidden');
      }
    }
    const after = await s.request('GET', `/v1/migrations/${migrationId}`, { token: seed.apiKey });
    assert.equal(after.status, 200, 'the migration is still there');
    assert.equal(after.body.state, 'draft');
    const channelAfter = await s.request('GET', `/v1/channels/${channelId}`, { token: seed.apiKey });
    assert.equal(channelAfter.body.forwarding_address, channelBefore.body.forwarding_address, 'the forwarding address was not rotated');
  });

  test('owners, admins, keys with every scope and keys with only migrations:manage are never refused with 403', async () => {
    const admin = await addPerson(s.app, seed.workspaceId, 'admin');
    const { secret: migrationsOnly } = await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'migrations-only', scopes: ['migrations:manage'] });
    const callers = { owner: seed.ownerToken, admin: admin.token, 'key with every scope': seed.apiKey, 'key with migrations:manage': migrationsOnly };
    for (const [who, token] of Object.entries(callers)) {
      const migrationId = await newMigration();
      for (const route of routes) {
        const r = await call(route, token, migrationId);
        assert.notEqual(r.status, 403, `${who}: ${route.method} ${route.path} answered 403 ${JSON.stringify(r.body).slice(0, 300)}`);
        assert.ok(r.status < 500, `${who}: ${route.method} ${route.path} answered ${r.status}`);
      }
    }
  });
});
