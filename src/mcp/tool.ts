// One way to declare an MCP tool: its input schema (zod, shown to assistants as JSON Schema), a
// description, and a function over the caller's Access that calls the same service functions as the
// HTTP routes. Its answer is JSON (text and structuredContent); a refusal is a tool error carrying
// the API's error body ({"error":{"code","message",…}}), so `forbidden`, `not_found`,
// `migration_state` and the rest mean the same here as over HTTP.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { Access } from '../auth/access.js';
import type { Ctx } from '../context.js';
import { AppError } from '../platform/errors.js';

export interface ToolContext {
  ctx: Ctx;
  access: Access;
  /** The origin the assistant reached the server by (links name it when SVC_PUBLIC_URL is not set). */
  origin: string;
}

export interface ToolSpec<Shape extends z.ZodRawShape> {
  name: string;
  title: string;
  description: string;
  input: Shape;
  annotations?: ToolAnnotations;
  run(args: z.infer<z.ZodObject<Shape>>, on: ToolContext): Promise<unknown>;
}

export function defineTool<Shape extends z.ZodRawShape>(spec: ToolSpec<Shape>): ToolSpec<Shape> {
  return spec;
}

function answer(value: unknown, isError = false): CallToolResult {
  const structured = (value && typeof value === 'object' && !Array.isArray(value) ? value : { result: value }) as Record<string, unknown>;
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: structured, ...(isError ? { isError: true } : {}) };
}

/** Registers tools on a server for one caller; every call is logged by name and outcome (never its arguments). */
export function registerTools(server: McpServer, on: ToolContext, tools: readonly ToolSpec<z.ZodRawShape>[]) {
  for (const tool of tools) {
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: tool.input, annotations: { title: tool.title, ...tool.annotations } },
      (async (args: Record<string, unknown>) => {
        const keyId = on.access.actor.kind === 'api_key' ? on.access.actor.keyId : undefined;
        try {
          const result = await tool.run(args as never, on);
          on.ctx.log.info('mcp tool', { tool: tool.name, key_id: keyId, ok: true });
          return answer(result);
        } catch (error) {
          if (error instanceof AppError) {
            on.ctx.log.info('mcp tool', { tool: tool.name, key_id: keyId, ok: false, code: error.code });
            return answer({ error: { code: error.code, message: error.message, status: error.status, ...error.extra } }, true);
          }
          on.ctx.log.error('mcp tool failed', {
            tool: tool.name,
            key_id: keyId,
            error,
            stack: error instanceof Error ? error.stack?.split('\n').slice(0, 6).join(' | ') : undefined,
          });
          return answer({ error: { code: 'internal', message: 'internal error; see the server log' } }, true);
        }
      }) as never,
    );
  }
}
