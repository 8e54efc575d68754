// Authorize before validating, on every route of the API document: a caller without the route's
// permission learns nothing about the body, the ids or the things they name (issue 32, item 11).
// Each secured route is called with made-up ids and a body that fits no schema by
//  - two API keys with one scope each (broadcasts:manage, migrations:manage): a route needs at most
//    one of them, so at least one key lacks the route's permission and must get 403;
//  - an agent, on every route whose 403 to a key names a permission agents lack either.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/api-keys/service.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

interface Operation {
  method: string;
  path: string;
  security?: Record<string, string[]>[];
  requestBody?: { content: Record<string, unknown> };
}

/** Routes any credential of the workspace may call; each says why. */
const OPEN_TO_EVERY_KEY: Record<string, string> = {
  'GET /v1/workspace': 'the workspace the credential belongs to',
  'GET /v1/inboxes': 'the inboxes the credential reaches (a key needs their ids to write)',
  'GET /v1/inboxes/{inboxId}': 'one inbox the credential reaches (404 for any other)',
  'GET /v1/channels': 'the channels of the inboxes the credential reaches',
  'GET /v1/inboxes/{inboxId}/greeting': 'an inbox’s greeting, readable by whoever reaches the inbox',
  'GET /v1/inboxes/{inboxId}/hours': 'an inbox’s business hours, readable by whoever reaches the inbox',
  'GET /v1/inboxes/{inboxId}/ratings': 'whether an inbox asks for ratings, readable by whoever reaches the inbox',
  'GET /v1/inboxes/{inboxId}/assignment': 'an inbox’s auto-assignment setting, readable by whoever reaches the inbox',
  'GET /v1/inboxes/{inboxId}/sla': 'an inbox’s SLA targets, readable by whoever reaches the inbox',
  'GET /v1/inboxes/{inboxId}/away-reply': 'an inbox’s out-of-office reply, readable by whoever reaches the inbox',
};

/** Routes a key needs a manager's scope for, but agents may use for their own things. */
const AGENTS_TOO: Record<string, string> = {
  'POST /v1/saved-replies': 'keys write workspace replies (workspace:manage); agents their personal ones',
  'PATCH /v1/saved-replies/{savedReplyId}': 'the same, for changing one',
};

/** Routes whose bearer is no workspace credential. */
const OTHER_SECRET: Record<string, string> = {
  'POST /v1/ingress/email': 'takes the server’s SVC_INGRESS_SECRET (off in this test: 404), not a workspace credential',
};

/** The scopes agents hold (src/auth/access.ts): a key refused for another scope means agents are refused too. */
const AGENT_SCOPES = ['conversations:read', 'conversations:write', 'contacts:read', 'contacts:write', 'analytics:read', 'analytics:write'];

describe('every secured route authorizes before it looks at the request', () => {
  let s: TestServer;
  let seed: Seed;
  let keys: { scope: string; secret: string }[];
  let agent: string;
  let operations: Operation[];

  before(async () => {
    s = await startTestServer();
    seed = await seedWorkspace(s.app);
    keys = [];
    for (const scope of ['broadcasts:manage', 'migrations:manage']) {
      keys.push({ scope, secret: (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: scope, scopes: [scope] })).secret });
    }
    agent = (await addPerson(s.app, seed.workspaceId, 'agent')).token;
    const doc = (await s.request('GET', '/v1/openapi.json')).body as { paths: Record<string, Record<string, Operation>> };
    operations = [];
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        if (op.security?.some((requirement) => 'bearer' in requirement)) operations.push({ ...op, method: method.toUpperCase(), path });
      }
    }
    assert.ok(operations.length > 100, `the document lists the secured routes (${operations.length})`);
  });
  after(() => s.stop());

  function call(op: Operation, token: string) {
    const path = op.path.replace(/\{[^}]+\}/g, (name) => `${name.slice(1, 4).toLowerCase()}_00000000000000000000000000`);
    const content = Object.keys(op.requestBody?.content ?? {});
    const headers: Record<string, string> = { origin: s.url };
    let raw: string | undefined;
    if (content.some((type) => /json/.test(type))) {
      headers['content-type'] = 'application/json';
      raw = JSON.stringify({ not_a_field: [1, { deep: true }], email: 'x', id: 42 });
    } else if (content.length > 0) {
      headers['content-type'] = content[0] === '*/*' ? 'application/octet-stream' : content[0];
      raw = 'not what this route takes';
    }
    return s.request(op.method, path, { token, headers, raw });
  }

  test('API keys without the route’s scope get 403, whatever the ids and the body', async () => {
    const wrong: string[] = [];
    for (const op of operations) {
      const route = `${op.method} ${op.path}`;
      if (op.path === '/v1/realtime' || route in OTHER_SECRET) continue; // the socket: its own test checks the refusal at the upgrade
      const answers = [];
      for (const key of keys) answers.push({ key: key.scope, ...(await call(op, key.secret)) });
      const refused = answers.filter((a) => a.status === 403);
      if (route in OPEN_TO_EVERY_KEY) {
        if (refused.length > 0) wrong.push(`${route}: listed as open to every key but refused`);
        continue;
      }
      if (refused.length === 0) wrong.push(`${route}: ${answers.map((a) => `${a.key} → ${a.status} ${a.body?.error?.code}`).join(', ')}`);
      for (const a of refused) assert.equal(a.body.error.code, 'forbidden', route);
    }
    assert.deepEqual(wrong, [], `routes that answered a caller without the permission with something else than 403:\n${wrong.join('\n')}`);
  });

  test('an agent gets 403 on every route that needs a manager’s or owner’s permission, whatever the ids and the body', async () => {
    const wrong: string[] = [];
    let checked = 0;
    for (const op of operations) {
      const route = `${op.method} ${op.path}`;
      if (op.path === '/v1/realtime' || route in OPEN_TO_EVERY_KEY || route in OTHER_SECRET || route in AGENTS_TOO) continue;
      // What the key's refusal names tells which permission the route needs.
      let refusal = '';
      for (const key of keys) {
        const r = await call(op, key.secret);
        if (r.status === 403) {
          refusal = r.body.error.message;
          break;
        }
      }
      const scope = /lacks the scope (\S+)/.exec(refusal)?.[1];
      const managersOnly = /is allowed to (owners|owners and admins) only, not to API keys/.test(refusal);
      const needsManager = managersOnly || (scope !== undefined && !AGENT_SCOPES.includes(scope));
      if (!needsManager) continue;
      checked++;
      const r = await call(op, agent);
      if (r.status !== 403) wrong.push(`${route}: agent → ${r.status} ${r.body?.error?.code} (${r.body?.error?.message})`);
    }
    assert.ok(checked > 30, `manager routes checked: ${checked}`);
    assert.deepEqual(wrong, [], `routes that answered an agent without the permission with something else than 403:\n${wrong.join('\n')}`);
  });
});
