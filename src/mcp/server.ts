// The MCP server of one request: the tools and the move_to_service prompt, bound to the caller's
// Access (a workspace API key). Stateless: every request builds it anew, so a revoked key or a
// changed scope counts from the next call.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { z } from 'zod';
import type { Access } from '../auth/access.js';
import type { Ctx } from '../context.js';
import { readVersion } from '../version.js';
import { MOVE_TO_SERVICE, moveToServiceArgs, moveToServiceText } from './prompt.js';
import { registerTools, type ToolSpec } from './tool.js';
import { analyticsTools } from './tools/analytics.js';
import { composeTools } from './tools/compose.js';
import { conversationTools } from './tools/conversations.js';
import { macroTools } from './tools/macros.js';
import { mergeTools } from './tools/merge.js';
import { migrationTools } from './tools/migrations.js';
import { placeTools } from './tools/places.js';
import { slaTools } from './tools/sla.js';
import { snoozeTools } from './tools/snooze.js';
import { teamTools } from './tools/teams.js';

const MCP_TOOLS: readonly ToolSpec<z.ZodRawShape>[] = [
  ...placeTools,
  ...migrationTools,
  ...conversationTools,
  ...composeTools,
  ...snoozeTools,
  ...mergeTools,
  ...teamTools,
  ...macroTools,
  ...slaTools,
  ...analyticsTools,
] as never;

export function buildMcpServer(ctx: Ctx, access: Access, origin: string): McpServer {
  const server = new McpServer(
    { name: 'svc', version: readVersion() },
    {
      capabilities: { tools: {}, prompts: {} },
      instructions:
        'Tools of a customer conversation service, acting as one workspace API key: its scopes and inbox limit apply to every call, and a refused call is a tool error with the API’s error code. Moving a mailbox: use the move_to_service prompt. Passwords are never passed through tools.',
    },
  );
  registerTools(server, { ctx, access, origin }, MCP_TOOLS);
  server.registerPrompt(
    MOVE_TO_SERVICE,
    {
      title: 'Move a mailbox to the service',
      description:
        'Walks through moving a mailbox into an inbox: find the provider, create, connect through a password page, choose, dry run, copy, switch delivery with a test message, finish. Needs a key with migrations:manage and no inbox limit.',
      argsSchema: moveToServiceArgs,
    },
    (args) => ({ messages: [{ role: 'user', content: { type: 'text', text: moveToServiceText(args) } }] }),
  );
  return server;
}
