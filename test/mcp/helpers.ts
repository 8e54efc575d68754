// An MCP client of the SDK over Streamable HTTP against a test server, and small readers of tool answers.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { TestServer } from '../helpers/server.js';

export interface McpSession {
  client: Client;
  /** Every tool answer's text, in order (to search for secrets). */
  answers: string[];
  call(name: string, args?: Record<string, unknown>): Promise<{ isError: boolean; body: any; text: string }>;
  close(): Promise<void>;
}

export async function connectMcp(s: TestServer, key: string): Promise<McpSession> {
  const client = new Client({ name: 'svc-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } });
  await client.connect(transport);
  const answers: string[] = [];
  return {
    client,
    answers,
    async call(name, args = {}) {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
      answers.push(text);
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* a message of the SDK (input validation) */
      }
      return { isError: result.isError === true, body, text };
    },
    close: () => client.close(),
  };
}
