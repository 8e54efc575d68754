// One delivery attempt over HTTP: POST the body, a 2xx within the deadline is a success; the deadline
// covers resolving, connecting, TLS, the answer's head and the part of its body that is read.
import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import { type Clock, type ManualClock, whenTimeUp } from '../platform/clock.js';
import { readVersion } from '../version.js';

/** The receiver must answer 2xx within this time (spec Limits). */
export const ANSWER_DEADLINE_MS = 10_000;
/** At most this much of an answer is read (spec Limits). */
export const ANSWER_READ_LIMIT = 64 * 1024;
/** How much of the answer the attempt log keeps ("start of the answer"). */
export const RESPONSE_KEPT_BYTES = 1024;

/** Headers every attempt carries besides the signature headers. */
export const ATTEMPT_HEADERS = { 'content-type': 'application/json', 'user-agent': `svc-webhooks/${readVersion()}` } as const;

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

/** Where an attempt goes, parsed once per endpoint URL (undici's dispatch takes origin and path apart). */
export interface AttemptTarget {
  origin: string;
  path: string;
}

export function attemptTarget(url: string): AttemptTarget {
  const parsed = new URL(url);
  return { origin: parsed.origin, path: parsed.pathname + parsed.search };
}

interface QueuedDeadline {
  at: number;
  onTimeUp: (() => void) | null;
  clear(): void;
}

/**
 * The deadlines of one dispatcher's attempts on the system clock. They all last the same time, so
 * they run out in the order they were set: one timer for the earliest serves them all, where a
 * timer per attempt (set, then cleared) cost more than the rest of the bookkeeping. An attempt on
 * a ManualClock keeps `whenTimeUp` (tests move that clock).
 */
export class AttemptDeadlines {
  private queue: QueuedDeadline[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly ms: number = ANSWER_DEADLINE_MS) {}

  add(onTimeUp: () => void): { clear(): void } {
    const entry: QueuedDeadline = {
      at: performance.now() + this.ms,
      onTimeUp,
      clear: () => {
        entry.onTimeUp = null;
        this.dropCleared();
      },
    };
    this.queue.push(entry);
    if (this.timer === undefined) this.arm(entry.at);
    return entry;
  }

  /** How many deadlines are still set. */
  get pending(): number {
    let n = 0;
    for (let i = this.head; i < this.queue.length; i++) if (this.queue[i]!.onTimeUp) n++;
    return n;
  }

  private dropCleared(): void {
    while (this.head < this.queue.length && this.queue[this.head]!.onTimeUp === null) this.head++;
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
      clearTimeout(this.timer);
      this.timer = undefined;
    } else if (this.head >= 1024 && this.head * 2 >= this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  private arm(at: number): void {
    this.timer = setTimeout(() => this.fire(), Math.max(0, at - performance.now()));
    this.timer.unref();
  }

  private fire(): void {
    this.timer = undefined;
    const now = performance.now();
    while (this.head < this.queue.length && this.queue[this.head]!.at <= now) {
      const entry = this.queue[this.head++]!;
      const onTimeUp = entry.onTimeUp;
      entry.onTimeUp = null;
      onTimeUp?.();
    }
    this.dropCleared();
    if (this.head < this.queue.length && this.timer === undefined) this.arm(this.queue[this.head]!.at);
  }
}

function isManual(clock: Clock): boolean {
  return typeof (clock as Partial<ManualClock>).deadlineAfter === 'function';
}

/** An attempt's headers: a record, or a flat list of names and values (what the dispatcher builds). */
export type AttemptHeaders = Record<string, string> | string[];

/**
 * Sends one attempt through undici's dispatch with a handler of its own: no response stream, no
 * AbortSignal and no promise per step, which costs about half of what `request` does per attempt.
 * `done` is called once with the attempt's result (never an exception).
 */
export function startAttempt(
  deps: { agent: Dispatcher; clock: Clock; deadlines?: AttemptDeadlines },
  req: { target: AttemptTarget; headers: AttemptHeaders; body: string | Buffer },
  done: (result: AttemptResult) => void,
): void {
  const attempt = new Attempt(deps.clock, deps.deadlines, done);
  try {
    deps.agent.dispatch({ origin: req.target.origin, path: req.target.path, method: 'POST', headers: req.headers, body: req.body }, attempt);
  } catch (e) {
    attempt.onResponseError(undefined, e as Error);
  }
}

/** startAttempt as a promise (it never rejects). */
export function sendAttempt(
  deps: { agent: Dispatcher; clock: Clock; deadlines?: AttemptDeadlines },
  req: { target: AttemptTarget; headers: AttemptHeaders; body: string | Buffer },
): Promise<AttemptResult> {
  return new Promise((resolve) => startAttempt(deps, req, resolve));
}

/** One attempt's handler: reads the start of the answer, ends at the deadline or the read limit. */
class Attempt implements Dispatcher.DispatchHandler {
  private readonly started = performance.now();
  private readonly deadline: { clear(): void };
  private controller: Dispatcher.DispatchController | undefined;
  private statusCode: number | null = null;
  private location: string | undefined;
  private readonly kept: Buffer[] = [];
  private read = 0;
  private timedOut = false;
  private settled = false;

  constructor(
    clock: Clock,
    deadlines: AttemptDeadlines | undefined,
    private readonly resolve: (result: AttemptResult) => void,
  ) {
    const timeUp = () => this.timeUp();
    this.deadline = deadlines && !isManual(clock) ? deadlines.add(timeUp) : whenTimeUp(clock, ANSWER_DEADLINE_MS, timeUp);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Time ran out while the request waited for a connection: it is not sent.
    if (this.timedOut) controller.abort(new Error('the deadline passed'));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    this.statusCode = statusCode;
    const location = headers.location;
    this.location = typeof location === 'string' ? location : undefined;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    const take = Math.min(chunk.length, ANSWER_READ_LIMIT - this.read);
    if (this.read < RESPONSE_KEPT_BYTES) this.kept.push(chunk.subarray(0, Math.min(take, RESPONSE_KEPT_BYTES - this.read)));
    this.read += take;
    if (this.read >= ANSWER_READ_LIMIT) {
      // The rest is never read: aborting closes the connection.
      this.answered();
      controller.abort(new Error('the answer read limit was reached'));
    }
  }

  onResponseEnd(): void {
    this.answered();
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    this.finish(false, this.timedOut ? `no complete answer within ${ANSWER_DEADLINE_MS / 1000} s` : describeFailure(error));
  }

  private timeUp(): void {
    this.timedOut = true;
    // Still resolving or connecting: undici waits for its own connect timeout, so the attempt ends
    // here and the request is dropped once it reaches onRequestStart.
    this.finish(false, `no complete answer within ${ANSWER_DEADLINE_MS / 1000} s`);
    this.controller?.abort(new Error('the deadline passed'));
  }

  private answered(): void {
    const statusCode = this.statusCode ?? 0;
    const ok = statusCode >= 200 && statusCode < 300;
    let error: string | null = null;
    if (statusCode >= 300 && statusCode < 400) {
      error = `redirect (${statusCode}${this.location !== undefined ? ` to ${this.location.slice(0, 200)}` : ''}) not followed; redirects count as failures`;
    } else if (!ok) {
      error = `the receiver answered ${statusCode}`;
    }
    this.finish(ok, error, true);
  }

  /** `answered`: the answer's status decides (and its start is kept); otherwise the attempt failed without an answer. */
  private finish(succeeded: boolean, error: string | null, answered = false): void {
    if (this.settled) return;
    this.settled = true;
    this.deadline.clear();
    this.resolve({
      succeeded,
      statusCode: this.statusCode,
      durationMs: Math.round(performance.now() - this.started),
      response: answered && this.kept.length ? Buffer.concat(this.kept).toString('utf8') : null,
      error,
      gone: answered && this.statusCode === 410,
    });
  }
}

function describeFailure(e: unknown): string {
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
