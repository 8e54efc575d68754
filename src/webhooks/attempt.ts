// One delivery attempt over HTTP: POST the body, a 2xx within the deadline is a success; the deadline
// covers resolving, connecting, TLS, the answer's head and the part of its body that is read.
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { type Dispatcher, request } from 'undici';
import { type Clock, startDeadline } from '../platform/clock.js';
import { readVersion } from '../version.js';

/** The receiver must answer 2xx within this time (spec Limits). */
export const ANSWER_DEADLINE_MS = 10_000;
/** At most this much of an answer is read (spec Limits). */
export const ANSWER_READ_LIMIT = 64 * 1024;
/** How much of the answer the attempt log keeps ("start of the answer"). */
export const RESPONSE_KEPT_BYTES = 1024;

/** Headers every attempt carries besides the signature headers. */
export const ATTEMPT_HEADERS = { 'content-type': 'application/json', 'user-agent': `svc-webhooks/${readVersion()}` } as const;

/**
 * Reads at most ANSWER_READ_LIMIT bytes of an answer and gives back its start (RESPONSE_KEPT_BYTES);
 * the rest is never read (the body is destroyed, which closes the connection).
 */
function readStart(body: Readable): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const kept: Buffer[] = [];
    let read = 0;
    const done = () => resolve(kept.length ? Buffer.concat(kept).toString('utf8') : null);
    body.on('data', (chunk: Buffer) => {
      const take = Math.min(chunk.length, ANSWER_READ_LIMIT - read);
      if (read < RESPONSE_KEPT_BYTES) kept.push(chunk.subarray(0, Math.min(take, RESPONSE_KEPT_BYTES - read)));
      read += take;
      if (read >= ANSWER_READ_LIMIT) {
        body.destroy();
        done();
      }
    });
    body.once('end', done);
    body.once('error', reject);
  });
}

export interface AttemptResult {
  succeeded: boolean;
  statusCode: number | null;
  durationMs: number;
  /** The start of the answer (at most RESPONSE_KEPT_BYTES), or null without one. */
  response: string | null;
  error: string | null;
  /** The receiver answered 410: the endpoint is disabled at once. */
  gone: boolean;
}

export async function sendAttempt(
  deps: { agent: Dispatcher; clock: Clock },
  req: { url: string; headers: Record<string, string>; body: string },
): Promise<AttemptResult> {
  const started = performance.now();
  const deadline = startDeadline(deps.clock, ANSWER_DEADLINE_MS);
  const signal = deadline.signal;
  const elapsed = () => Math.round(performance.now() - started);
  let statusCode: number | null = null;
  let response: string | null = null;
  try {
    // undici honours the signal once connected; while it is still resolving or connecting it waits
    // for its own connect timeout, so the deadline is also raced here.
    const timeUp = new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    const sent = request(req.url, { method: 'POST', dispatcher: deps.agent, signal, headers: req.headers, body: req.body });
    sent.catch(() => {}); // settled after the deadline when it lost the race
    timeUp.catch(() => {});
    const res = await Promise.race([sent, timeUp]);
    statusCode = res.statusCode;
    response = await readStart(res.body);
    const ok = statusCode >= 200 && statusCode < 300;
    let error: string | null = null;
    if (statusCode >= 300 && statusCode < 400) {
      const location = res.headers.location;
      error = `redirect (${statusCode}${typeof location === 'string' ? ` to ${location.slice(0, 200)}` : ''}) not followed; redirects count as failures`;
    } else if (!ok) {
      error = `the receiver answered ${statusCode}`;
    }
    return { succeeded: ok, statusCode, durationMs: elapsed(), response, error, gone: statusCode === 410 };
  } catch (e) {
    return { succeeded: false, statusCode, durationMs: elapsed(), response, error: describeFailure(e, signal), gone: false };
  } finally {
    deadline.clear();
  }
}

function describeFailure(e: unknown, signal: AbortSignal): string {
  if (signal.aborted) return `no complete answer within ${ANSWER_DEADLINE_MS / 1000} s`;
  const err = e as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const inner = err.cause && typeof err.cause === 'object' ? err.cause : err;
  const code = inner.code ?? err.code;
  if (code === 'ADDRESS_REFUSED') return `address refused: ${inner.message}`;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'the host name does not resolve';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'the connection was closed before an answer';
  const message = (inner.message ?? String(e)).slice(0, 300);
  return code ? `${code}: ${message}` : message;
}
