// The roles matrix, table-driven over every /v1 route in /v1/openapi.json: for owner, admin, agent
// and an agent limited to one inbox, each route group is refused (403) or not. Requests carry a body
// that matches the route's schema, so a refusal cannot hide behind a 400.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createInbox } from '../../src/inboxes/service.js';
import { createSession } from '../../src/people/service.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

type Who = 'owner' | 'admin' | 'agent' | 'limited agent';
const WHO: Who[] = ['owner', 'admin', 'agent', 'limited agent'];

/** Which callers get 403, per route group; the first group that matches a route decides. */
const GROUPS: { name: string; matches: (method: string, path: string) => boolean; refused: Who[] }[] = [
  {
    name: 'workspace settings, deletion and the broadcast approval request: owners only',
    matches: (m, p) => (p === '/v1/workspace' && m !== 'GET') || p === '/v1/workspace/broadcasts/approval-request',
    refused: ['admin', 'agent', 'limited agent'],
  },
  {
    name: 'creating a workspace: only with open sign-up (closed here), for everyone alike',
    matches: (m, p) => m === 'POST' && p === '/v1/workspaces',
    refused: WHO,
  },
  {
    name: 'members, invites, API keys, webhooks, inboxes and channels, broadcasts, migrations and usage: owners and admins',
    matches: (m, p) =>
      (/^\/v1\/(api-keys|webhooks|broadcasts|migrations|invites)(\/|$)/.test(p) && !['/v1/invites/accept', '/v1/invites/preview'].includes(p)) ||
      p === '/v1/usage' ||
      p === '/v1/usage/export.csv' ||
      p === '/v1/workspace/broadcasts' ||
      (p.startsWith('/v1/members/') && m !== 'GET') ||
      (/^\/v1\/(inboxes|channels)(\/|$)/.test(p) && m !== 'GET' && p !== '/v1/inboxes/{inboxId}/attachments'),
    refused: ['agent', 'limited agent'],
  },
  {
    name: 'teams: every member reads them, owners and admins manage them',
    matches: (m, p) => /^\/v1\/teams(\/|$)/.test(p) && m !== 'GET',
    refused: ['agent', 'limited agent'],
  },
  {
    name: 'custom fields: every member reads them, owners and admins manage them',
    matches: (m, p) => /^\/v1\/custom-fields(\/|$)/.test(p) && m !== 'GET',
    refused: ['agent', 'limited agent'],
  },
  {
    name: 'automation rules, their dry runs and run log: owners and admins (macros are run by every member)',
    matches: (_m, p) => /^\/v1\/automation\//.test(p),
    refused: ['agent', 'limited agent'],
  },
  {
    name: 'analytics properties: every member reads them and their figures, owners and admins manage them',
    matches: (m, p) => p.startsWith('/v1/analytics/properties') && m !== 'GET',
    refused: ['agent', 'limited agent'],
  },
  {
    name: 'contact CSV imports: every member, with every inbox in reach (rows may match any contact of the workspace)',
    matches: (_m, p) => p === '/v1/contacts/import' || /^\/v1\/contact-imports(\/|$)/.test(p),
    refused: ['limited agent'],
  },
  // Uploading a file for a new conversation of an inbox is writing in it, as a reply's upload is.
  { name: 'everything else: conversations, contacts, events, the caller’s own account, public routes', matches: () => true, refused: [] },
];

type Schema = Record<string, any>;

/** A value that satisfies the JSON schema (required properties only). */
function sample(doc: Schema, schema: Schema | undefined, key = ''): unknown {
  if (!schema) return undefined;
  if (schema.$ref) return sample(doc, doc.components.schemas[schema.$ref.split('/').pop()], key);
  if (schema.example !== undefined) return schema.example;
  if (schema.const !== undefined) return schema.const;
  // an invite's role: agent, which admins may grant too (owners are the owner-only case)
  if (schema.enum) return key === 'role' ? 'agent' : schema.enum.find((v: unknown) => v !== null);
  for (const k of ['oneOf', 'anyOf'] as const) if (schema[k]) return sample(doc, schema[k].find((s: Schema) => s.type !== 'null') ?? schema[k][0], key);
  if (schema.allOf) return Object.assign({}, ...schema.allOf.map((s: Schema) => sample(doc, s, key)));
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const name of schema.required ?? []) out[name] = sample(doc, schema.properties?.[name], name);
      return out;
    }
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => sample(doc, schema.items, key));
    case 'integer':
    case 'number':
      return schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 1);
    case 'boolean':
      return false;
    case 'string': {
      if (schema.format === 'date-time') return '2030-01-01T00:00:00.000Z';
      if (schema.format === 'email' || /email|address/.test(key)) return 'matrix@example.com';
      // a reserved address: refused without any network traffic
      if (schema.format === 'uri' || key === 'url') return 'https://192.0.2.10/hook';
      return 'x'.repeat(Math.max(schema.minLength ?? 1, 1)).slice(0, schema.maxLength ?? 100);
    }
    default:
      return {};
  }
}

describe('the roles matrix over every /v1 route', () => {
  let s: TestServer;
  let seed: Seed;
  let doc: Schema;
  const people = new Map<Who, string>();
  before(async () => {
    s = await startTestServer();
    // Nothing in this test may leave the machine.
    s.app.lookup = async () => {
      throw new Error('no name resolution in this test');
    };
    s.app.resolveMx = async () => [];
    seed = await seedWorkspace(s.app);
    const limitedTo = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Only this' });
    people.set('owner', seed.ownerId);
    people.set('admin', (await addPerson(s.app, seed.workspaceId, 'admin')).personId);
    people.set('agent', (await addPerson(s.app, seed.workspaceId, 'agent')).personId);
    const limited = await addPerson(s.app, seed.workspaceId, 'agent');
    await s.app.db
      .updateTable('memberships')
      .set({ inbox_ids: JSON.stringify([limitedTo.id]) })
      .where('person_id', '=', limited.personId)
      .execute();
    people.set('limited agent', limited.personId);
    doc = (await s.request('GET', '/v1/openapi.json')).body;
  });
  after(() => s.stop());

  test('each route group answers 403 exactly to the roles the matrix refuses', async () => {
    const mismatches: string[] = [];
    let checked = 0;
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Schema>)) {
      if (!path.startsWith('/v1/')) continue;
      for (const [method, op] of Object.entries(ops)) {
        const m = method.toUpperCase();
        const group = GROUPS.find((g) => g.matches(m, path))!;
        const params = (op.parameters ?? []) as Schema[];
        const url = new URL(
          path.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'part' ? '1' : `${name}_matrix`)),
          'http://x',
        );
        for (const p of params) if (p.in === 'query' && p.required) url.searchParams.set(p.name, String(sample(doc, p.schema, p.name)));
        const content = op.requestBody?.content ?? {};
        const type = Object.keys(content)[0];
        for (const who of WHO) {
          const { token } = await createSession(s.app, people.get(who)!);
          const headers: Record<string, string> = { authorization: `Bearer ${token}`, 'svc-workspace': seed.workspaceId };
          let raw: string | undefined;
          if (type === 'application/json') {
            headers['content-type'] = type;
            raw = JSON.stringify(sample(doc, content[type].schema));
          } else if (type) {
            headers['content-type'] = type === '*/*' ? 'application/octet-stream' : type;
            raw = 'matrix';
          }
          const r = await s.request(m, url.pathname + url.search, { headers, raw });
          const refused = r.status === 403;
          const expected = group.refused.includes(who);
          checked++;
          if (refused !== expected)
            mismatches.push(
              `${m} ${path} as ${who}: ${r.status} ${JSON.stringify(r.body).slice(0, 160)} (expected ${expected ? '403' : 'not 403'}: ${group.name})`,
            );
        }
      }
    }
    assert.ok(checked > 400, `only ${checked} requests were made`);
    assert.deepEqual(mismatches, []);
  });

  test('every route of members, invites, sign-in links and sessions is in the document with its schemas', () => {
    const expected: [string, string][] = [
      ['get', '/v1/members'],
      ['patch', '/v1/members/{memberId}'],
      ['delete', '/v1/members/{memberId}'],
      ['post', '/v1/invites'],
      ['get', '/v1/invites'],
      ['delete', '/v1/invites/{inviteId}'],
      ['post', '/v1/invites/{inviteId}/resend'],
      ['post', '/v1/invites/accept'],
      ['post', '/v1/invites/preview'],
      ['post', '/v1/auth/link'],
      ['get', '/v1/auth/methods'],
      ['get', '/v1/me/sessions'],
      ['delete', '/v1/me/sessions'],
      ['delete', '/v1/me/sessions/{sessionId}'],
    ];
    for (const [method, path] of expected) {
      const op = doc.paths[path]?.[method];
      assert.ok(op, `${method} ${path} is missing`);
      const ok = Object.entries(op.responses as Schema).find(([status]) => status.startsWith('2'))![1] as Schema;
      assert.ok(ok.content?.['application/json']?.schema, `${method} ${path} has no answer schema`);
      if (['post', 'patch'].includes(method) && !path.endsWith('/resend'))
        assert.ok(op.requestBody?.content?.['application/json']?.schema, `${method} ${path} has no body schema`);
    }
    assert.ok(doc.components.schemas.Member && doc.components.schemas.Invite && doc.components.schemas.Session);
  });
});
