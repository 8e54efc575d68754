// The OpenAPI document at /v1/openapi.json, finished in one place so that every operation, including
// routes added later, is complete for client generators without each route file repeating it:
// - an operationId derived from method and path (a route may set its own),
// - `security: []` on operations that declare no security (they are public),
// - the error answers the server can give for the operation's shape, all with the one Error body
//   (components/schemas/Error); a route adds others (422, 429, …) by naming them in `responses`,
//   with a description only,
// - `servers` from SVC_PUBLIC_URL, or the address the document was asked from when that is unset.
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Ctx } from '../context.js';
import { readVersion } from '../version.js';

type Json = Record<string, any>;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const WRITES = new Set(['post', 'put', 'patch', 'delete']);
const ERROR_REF = { $ref: '#/components/schemas/Error' };

const ERROR_ANSWERS: Record<string, string> = {
  '400': 'invalid_request: the parameters or the body do not match this operation (`issues` lists each offending field)',
  '401': 'unauthorized: no credentials, or a key or session that is unknown, expired or revoked',
  '403': 'forbidden: these credentials may not do this (role, scope or inbox limit)',
  '404': 'not_found: no such resource, or not one these credentials can see',
  '409': 'conflict, or a more precise code: the current state does not allow this',
  '413': 'too_large: the request body is larger than this operation takes',
  '415': 'unsupported_media_type: the body’s Content-Type is not one this operation takes',
  '422': 'hosted_limit: a limit of this server (`limit` names the SVC_… setting)',
  '429': 'rate_limited: too many requests; wait `retry_after` seconds (also in Retry-After)',
};

/** Stable and unique per method and path: GET /v1/contacts/{contactId}/merge → getContactsByContactIdMerge. */
export function operationIdFor(method: string, path: string): string {
  const pascal = (text: string) =>
    text
      .split(/[^A-Za-z0-9]+/)
      .filter(Boolean)
      .map((w) => w[0].toUpperCase() + w.slice(1))
      .join('');
  const segments = path.split('/').filter(Boolean);
  if (segments[0] === 'v1') segments.shift();
  const words = segments.map((s) => {
    const param = /^\{(.+)\}$/.exec(s);
    return param ? `By${pascal(param[1])}` : pascal(s);
  });
  return method.toLowerCase() + words.join('');
}

/** The error statuses an operation of this shape can answer (the route's own are added to these). */
function errorStatuses(method: string, path: string, op: Json): string[] {
  const secured = Array.isArray(op.security) && op.security.length > 0;
  const hasBody = !!op.requestBody;
  const hasParams = (op.parameters?.length ?? 0) > 0 || hasBody;
  const statuses: string[] = [];
  if (hasParams) statuses.push('400');
  if (secured) statuses.push('401', '403');
  if (path.includes('{') || (secured && hasBody)) statuses.push('404');
  if (secured && WRITES.has(method)) statuses.push('409');
  if (hasBody) statuses.push('413', '415');
  return statuses;
}

function errorAnswer(status: string, description = ERROR_ANSWERS[status] ?? 'refused') {
  const answer: Json = { description, content: { 'application/json': { schema: ERROR_REF } } };
  if (status === '429') answer.headers = { 'Retry-After': { description: 'seconds to wait', schema: { type: 'integer' } } };
  return answer;
}

/** Adds what every operation needs; returns the document it was given. */
export function completeOperations(doc: Json): Json {
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Json)) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      op.operationId ??= operationIdFor(method, path);
      op.security ??= [];
      op.responses ??= {};
      for (const [status, answer] of Object.entries(op.responses as Json)) {
        // A route that names an error status with a description only gets the shared body.
        if (/^4\d\d$/.test(status) && !answer.content && !answer.$ref) op.responses[status] = errorAnswer(status, answer.description);
      }
      for (const status of errorStatuses(method, path, op)) op.responses[status] ??= errorAnswer(status);
    }
  }
  return doc;
}

/** Serves the finished document; it is built once, at the first request, after every route is registered. */
export function serveApiDocument(app: OpenAPIHono<any>, ctx: Ctx, path: string) {
  let built: Json | undefined;
  app.get(path, (c) => {
    built ??= completeOperations(
      app.getOpenAPI31Document({
        openapi: '3.1.0',
        info: { title: 'svc API', version: readVersion(), license: { name: 'AGPL-3.0-only', url: 'https://www.gnu.org/licenses/agpl-3.0.html' } },
      }) as Json,
    );
    const url = ctx.config.publicUrlConfigured ? ctx.config.publicUrl : new URL(c.req.url).origin;
    const { openapi, info, ...rest } = built;
    return c.json({ openapi, info, servers: [{ url }], ...rest });
  });
}
