// POST /v1/mcp: the Model Context Protocol endpoint (Streamable HTTP, stateless, JSON answers) for
// assistants. It takes a workspace API key as Bearer — never a session cookie — and acts with the
// key's scopes and inbox limit. GET and DELETE (server-sent streams, sessions) are not offered: 405.
import type { Context } from 'hono';
import type { Access } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp, AppEnv } from '../http/app.js';
import { requireIdentity } from '../http/auth.js';
import { errorBody } from '../http/errors.js';
import { checkJsonBody } from '../http/json-body.js';
import { forbidden, unauthorized } from '../platform/errors.js';

// The MCP SDK (its protocol's schemas, the transport) and the tools are loaded on the first request:
// a server that no assistant calls does not keep them in memory (bench/startup's idle RSS).
const loadMcp = () =>
  Promise.all([import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'), import('./server.js')]).then(([transport, server]) => ({
    Transport: transport.WebStandardStreamableHTTPServerTransport,
    buildMcpServer: server.buildMcpServer,
  }));

const MCP_PATH = '/v1/mcp';

/** The API key's access; 401 without one (a session cookie is not looked at), 403 for a session token. */
async function requireKeyAccess(c: Context<AppEnv>, ctx: Ctx): Promise<Access> {
  if (!c.req.header('authorization')) throw unauthorized('missing credentials: send Authorization: Bearer <workspace API key>');
  const identity = await requireIdentity(c, ctx);
  if (identity.kind !== 'api_key') throw forbidden('the MCP endpoint takes a workspace API key (svc_sk_…), not a session');
  return identity.access;
}

export function registerMcpRoutes(app: ApiApp, ctx: Ctx) {
  app.post(MCP_PATH, checkJsonBody, async (c) => {
    const access = await requireKeyAccess(c, ctx);
    const { Transport, buildMcpServer } = await loadMcp();
    const server = buildMcpServer(ctx, access, new URL(c.req.url).origin);
    const transport = new Transport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    try {
      await server.connect(transport);
      const body = await c.req.text();
      return await transport.handleRequest(c.req.raw, { parsedBody: body.trim() ? JSON.parse(body) : undefined });
    } finally {
      await server.close();
    }
  });
  for (const method of ['GET', 'DELETE'] as const) {
    app.on(method, MCP_PATH, (c) =>
      c.json(errorBody('method_not_allowed', 'this MCP endpoint is stateless: send JSON-RPC requests with POST'), 405, { allow: 'POST' }),
    );
  }
}
