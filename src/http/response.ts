// node's ServerResponse for the API server, holding the headers every answer carries (the request id,
// nosniff, no-store, HSTS) until the answer's head is written. Setting them with setHeader when the
// request comes in made node keep a header table per answer and merge the answer's own headers into
// it header by header in writeHead (validating and lower-casing each one again), ~4 µs of a ~20 µs
// answer (bench/http-inprocess, see README.md). Here they join the answer's own headers object in
// writeHead, which node then writes as it is. A name the answer sets itself (in writeHead or with
// setHeader before it), in any case, keeps the answer's value.
import { type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders, type ServerOptions, ServerResponse } from 'node:http';

/** A header every answer carries: its name in lower case and its value. */
export type CommonHeader = readonly [name: string, value: string];

export class ApiResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  #requestId: string | undefined = undefined;
  #fixed: readonly CommonHeader[] = [];

  /** The request id (`x-request-id`) and the fixed headers this answer carries. */
  carry(requestId: string, fixed: readonly CommonHeader[]): void {
    this.#requestId = requestId;
    this.#fixed = fixed;
  }

  override writeHead(statusCode: number, statusMessage?: string, headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this;
  override writeHead(statusCode: number, headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this;
  override writeHead(
    statusCode: number,
    reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ): this {
    const requestId = this.#requestId;
    if (requestId === undefined) return super.writeHead(statusCode, reason as string, headers);
    this.#requestId = undefined;
    if (typeof reason === 'string') return super.writeHead(statusCode, reason, this.#withCommon(requestId, headers));
    return super.writeHead(statusCode, this.#withCommon(requestId, reason));
  }

  #withCommon(requestId: string, headers: OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined): OutgoingHttpHeaders | OutgoingHttpHeader[] {
    if (Array.isArray(headers)) {
      // The raw form ([name, value, …]): set first, node then sets the answer's own over them.
      if (!this.hasHeader('x-request-id')) this.setHeader('x-request-id', requestId);
      for (const [name, value] of this.#fixed) if (!this.hasHeader(name)) this.setHeader(name, value);
      return headers;
    }
    const out: OutgoingHttpHeaders = {};
    if (!named(headers, 'x-request-id') && !this.hasHeader('x-request-id')) out['x-request-id'] = requestId;
    for (const [name, value] of this.#fixed) if (!named(headers, name) && !this.hasHeader(name)) out[name] = value;
    for (const key in headers) out[key] = headers[key];
    return out;
  }
}

/** Whether a headers object names `name` (lower case), in any case. */
function named(headers: OutgoingHttpHeaders | undefined, name: string): boolean {
  for (const key in headers) if (key.length === name.length && key.toLowerCase() === name) return true;
  return false;
}

/** The node server options of the API server (@hono/node-server's `serverOptions`). */
export const API_SERVER_OPTIONS: ServerOptions = { ServerResponse: ApiResponse as typeof ServerResponse };
