// A webhook receiver on 127.0.0.1 for tests and benches, and the independent verifier: every
// delivery is checked with the `standardwebhooks` package and its headers against the spec's formats.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Clock } from '../../src/platform/clock.js';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Set once the handler's answer was written. */
  answered: number | null;
}

export type Answer = { status: number; body?: string | Buffer; headers?: Record<string, string> } | 'hold' | ((res: http.ServerResponse) => void);
export type Handler = (r: Received, req: http.IncomingMessage) => Answer | Promise<Answer>;

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  handler: Handler;
  /** Resolves once `n` requests arrived in all (waits on real events, bounded by timeoutMs). */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>;
  /** Answers every held request with 200. */
  releaseHeld(status?: number): void;
  /** Connections open to the receiver now (once a killed sender's are all closed, nothing more of it can arrive). */
  openConnections(): number;
  close(): Promise<void>;
}

export async function startReceiver(handler: Handler = () => ({ status: 200, body: 'ok' })): Promise<Receiver> {
  const received: Received[] = [];
  const held: { res: http.ServerResponse; r: Received }[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const r: Received = { path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), answered: null };
      received.push(r);
      for (const w of waiters.filter((w) => received.length >= w.n)) w.resolve();
      const answer = await receiver.handler(r, req);
      if (answer === 'hold') {
        held.push({ res, r });
        return;
      }
      if (typeof answer === 'function') return answer(res);
      r.answered = answer.status;
      res.writeHead(answer.status, answer.headers ?? { 'content-type': 'text/plain' });
      res.end(answer.body ?? '');
    });
  });
  server.keepAliveTimeout = 60_000;
  let connections = 0;
  server.on('connection', (socket) => {
    connections++;
    socket.once('close', () => connections--);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    handler,
    waitFor(n, timeoutMs = 20_000) {
      if (received.length >= n) return Promise.resolve(received);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`receiver got ${received.length} requests, expected ${n}`)), timeoutMs);
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve(received);
          },
        });
      });
    },
    openConnections: () => connections,
    releaseHeld(status = 200) {
      for (const { res, r } of held.splice(0)) {
        if (res.destroyed) continue;
        r.answered = status;
        res.writeHead(status).end('released');
      }
    },
    async close() {
      receiver.releaseHeld();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}

const ID = /^msg_[0-9a-z]{26}$/;
const TIMESTAMP = /^\d{10}$/;
const SIGNATURE = /^v1,[A-Za-z0-9+/]{43}=$/;

/**
 * Verifies one delivery as a receiver would: standardwebhooks checks the signature over the raw
 * body (against `secret`), the timestamp tolerance (5 minutes) is measured on the test's clock,
 * and the headers must have exactly the spec's formats. Returns the parsed payload.
 */
export function verifyDelivery(r: Received, secret: string, clock: Clock, opts: { signatures?: number } = {}): any {
  const id = String(r.headers['webhook-id']);
  const ts = String(r.headers['webhook-timestamp']);
  const sig = String(r.headers['webhook-signature']);
  assert.match(id, ID, 'webhook-id is msg_ and a 26-character id');
  assert.match(ts, TIMESTAMP, 'webhook-timestamp is Unix seconds');
  const parts = sig.split(' ');
  assert.equal(parts.length, opts.signatures ?? 1, `webhook-signature carries ${opts.signatures ?? 1} value(s): ${sig}`);
  for (const p of parts) assert.match(p, SIGNATURE, 'each signature is v1,<base64 of 32 bytes>');
  assert.equal(r.headers['content-type'], 'application/json');
  const wh = new Webhook(secret);
  // The package compares timestamps with the machine's clock; tests move their own clock instead.
  (wh as unknown as { verifyTimestamp(h: string): Date }).verifyTimestamp = (header: string) => {
    const t = Number.parseInt(header, 10);
    const now = Math.floor(clock.now().getTime() / 1000);
    if (Math.abs(now - t) > 5 * 60) throw new Error(`timestamp ${t} is more than 5 minutes from ${now}`);
    return new Date(t * 1000);
  };
  return wh.verify(r.body, { 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': sig });
}
