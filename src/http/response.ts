// node's ServerResponse for the API server, holding the headers every answer carries (the request id,
// nosniff, no-store, HSTS) until the answer's head is written. Setting them with setHeader when the
// request comes in made node keep a header table per answer and merge the answer's own headers into
// it header by header in writeHead (validating and lower-casing each one again), ~4 µs of a ~20 µs
// answer (bench/http-inprocess, see README.md). Here they join the answer's own headers object in
// writeHead, which node then writes as it is. A name the answer sets itself (in writeHead or with
// setHeader before it), in any case, keeps the answer's value. The socket write `end()` makes waits
// for the end of the event loop's turn, so the answers of one turn go to the kernel together (below).
import { type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders, type ServerOptions, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** A header every answer carries: its name in lower case and its value. */
export type CommonHeader = readonly [name: string, value: string];

export class ApiResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  #requestId: string | undefined = undefined;
  #fixed: readonly CommonHeader[] = [];

  /** Ends the answer; the socket write it makes waits for the end of this turn of the event loop (`holdWrites`). */
  override end(...args: unknown[]): this {
    const socket = this.socket as HoldingSocket | null;
    if (!socket) return ServerResponse.prototype.end.apply(this, args as never) as this;
    holdWrites(socket);
    socket[HOLDING] = true;
    try {
      return ServerResponse.prototype.end.apply(this, args as never) as this;
    } finally {
      socket[HOLDING] = false;
    }
  }

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

// Answers ended in one turn of the event loop go to the kernel together, after the turn's I/O
// callbacks (setImmediate), instead of one `writev` each as node writes them inside `end()`. Under
// load a turn answers many connections; a peer on the same host (a reverse proxy, a load test) that
// sleeps between answers is then woken once per turn (or per HELD_AT_MOST answers) instead of once
// per answer; on this VM the wake-up inside `writev` (the kernel's loopback TCP delivering to the
// sleeping peer) cost more than svc's own work for the request (see README.md, the request path's
// speed). Only the write made
// inside `end()` waits: writes of a streamed answer before its end go at once. The stream's
// semantics stay node's: a held write is a write in progress (later writes queue behind it, `finish`
// and the socket's `end` wait for it), and a socket destroyed before the turn ends writes it first.
const HOLDING = Symbol('holding writes');
const WRAPPED = Symbol('writes wrapped');
const PENDING = Symbol('held write');
type HoldingSocket = Socket & {
  [HOLDING]?: boolean;
  [WRAPPED]?: true;
  [PENDING]?: () => void;
  _write(chunk: unknown, encoding: BufferEncoding, callback: (error?: Error | null) => void): void;
  _writev?(chunks: unknown[], callback: (error?: Error | null) => void): void;
};

let heldSockets: HoldingSocket[] = [];
/**
 * At most this many answers wait together: with hundreds of connections ready in one turn, an answer
 * waits for the handlers of at most 15 others (bench/http: the same CPU per request as a whole turn's).
 */
const HELD_AT_MOST = 16;

function flushHeld(): void {
  const sockets = heldSockets;
  heldSockets = [];
  for (const socket of sockets) release(socket);
}

/** A write in progress (the stream starts no other until it calls back): one per socket at most. */
function hold(socket: HoldingSocket, write: () => void): void {
  socket[PENDING] = write;
  const count = heldSockets.push(socket);
  if (count === 1) setImmediate(flushHeld);
  else if (count >= HELD_AT_MOST) flushHeld();
}

function release(socket: HoldingSocket): void {
  const write = socket[PENDING];
  if (!write) return;
  socket[PENDING] = undefined;
  try {
    write();
  } catch (error) {
    // Thrown inside end() it would have reached the route's error handling; here, only this socket fails.
    socket.destroy(error as Error);
  }
}

/**
 * Makes the socket's writes wait for the end of the turn while `socket[HOLDING]` (once per socket).
 * A socket destroyed in the same turn (node's HTTP parser refusing bytes after the request, a
 * timeout, the server closing) first writes what it holds, as it had before the destroy.
 */
function holdWrites(socket: HoldingSocket): void {
  if (socket[WRAPPED]) return;
  socket[WRAPPED] = true;
  const write = socket._write;
  socket._write = function (this: HoldingSocket, chunk, encoding, callback) {
    if (this[HOLDING]) hold(this, () => write.call(this, chunk, encoding, callback));
    else write.call(this, chunk, encoding, callback);
  };
  const writev = socket._writev;
  if (writev) {
    socket._writev = function (this: HoldingSocket, chunks, callback) {
      if (this[HOLDING]) hold(this, () => writev.call(this, chunks, callback));
      else writev.call(this, chunks, callback);
    };
  }
  const destroy = socket.destroy;
  socket.destroy = function (this: HoldingSocket, error?: Error) {
    release(this);
    return destroy.call(this, error);
  };
}

/** Whether a headers object names `name` (lower case), in any case. */
function named(headers: OutgoingHttpHeaders | undefined, name: string): boolean {
  for (const key in headers) if (key.length === name.length && key.toLowerCase() === name) return true;
  return false;
}

/** The node server options of the API server (@hono/node-server's `serverOptions`). */
export const API_SERVER_OPTIONS: ServerOptions = { ServerResponse: ApiResponse as typeof ServerResponse };
