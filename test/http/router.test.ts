// The API's router (src/http/router.ts): hono's own router with recent answers kept.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RegExpRouter } from 'hono/router/reg-exp-router';
import { SmartRouter } from 'hono/router/smart-router';
import { TrieRouter } from 'hono/router/trie-router';
import { RememberingRouter } from '../../src/http/router.js';

const ROUTES: [string, string][] = [
  ['ALL', '*'],
  ['GET', '/v1/invites/:inviteId'],
  ['POST', '/v1/invites/accept'],
  ['GET', '/v1/conversations/:id'],
  ['GET', '/v1/conversations/:id/messages/:messageId'],
  ['GET', '/v1/workspace'],
  ['GET', '*'],
];

function both() {
  const plain = new SmartRouter<string>({ routers: [new RegExpRouter(), new TrieRouter()] });
  const remembering = new RememberingRouter<string>(3);
  for (const [method, path] of ROUTES) {
    plain.add(method, path, `${method} ${path}`);
    remembering.add(method, path, `${method} ${path}`);
  }
  return { plain, remembering };
}

/** The handlers and their params of a match, whatever the router's result shape. */
function matched(router: { match(m: string, p: string): unknown }, method: string, path: string) {
  const [handlers, stash] = router.match(method, path) as [[string, Record<string, number | string>][], string[] | undefined];
  return handlers.map(([handler, params]) => ({
    handler,
    params: Object.fromEntries(Object.entries(params).map(([k, v]) => [k, stash ? stash[v as number] : v])),
  }));
}

test('answers what hono’s own router answers, the first time and again, for every method and path', () => {
  const { plain, remembering } = both();
  const asks: [string, string][] = [
    ['GET', '/v1/workspace'],
    ['GET', '/v1/conversations/cv_1'],
    ['GET', '/v1/conversations/cv_2'],
    ['GET', '/v1/conversations/cv_1/messages/m_9'],
    ['POST', '/v1/invites/accept'],
    ['GET', '/v1/invites/inv_3'],
    ['DELETE', '/v1/workspace'],
    ['GET', '/somewhere/else'],
  ];
  for (let round = 0; round < 3; round++) {
    for (const [method, path] of asks) assert.deepEqual(matched(remembering, method, path), matched(plain, method, path), `${method} ${path}`);
  }
  assert.deepEqual(matched(remembering, 'GET', '/v1/conversations/cv_2').find((m) => m.handler.includes(':id'))?.params, { id: 'cv_2' });
});

test('keeps at most its number of answers; a forgotten one is asked again and still right', () => {
  const { plain, remembering } = both();
  for (let i = 0; i < 10; i++) {
    const path = `/v1/conversations/cv_${i}`;
    assert.deepEqual(matched(remembering, 'GET', path), matched(plain, 'GET', path));
  }
  assert.deepEqual(matched(remembering, 'GET', '/v1/conversations/cv_0'), matched(plain, 'GET', '/v1/conversations/cv_0'));
  const long = `/v1/conversations/${'x'.repeat(300)}`;
  for (let i = 0; i < 2; i++) assert.deepEqual(matched(remembering, 'GET', long), matched(plain, 'GET', long));
});
