// The only way a help-desk source talks to its provider: an HTTP client that sends GET requests and
// nothing else, the way the IMAP guard lets only reading commands through. Any other method is
// refused before a byte is sent (ReadOnlyViolation, recorded like a blocked IMAP command). The one
// exception is explicit: an OAuth token request (client credentials) may be POSTed to the single
// token URL the client was made with. The client also keeps within the provider's published rate
// limits (a sliding minute per bucket) and honours 429 with Retry-After by waiting (the wait is
// reported, so the migration shows it); a longer wait becomes a provider_limit failure.
import type { Ctx } from '../../../context.js';
import { resolveServer, SourceError } from '../connect.js';
import { ReadOnlyViolation } from '../imap.js';

export const REQUEST_TIMEOUT_MS = 60_000;
/** A Retry-After up to this long is waited out; a longer one pauses the migration (provider_limit). */
export const MAX_INLINE_WAIT_MS = 120_000;
const MAX_RETRIES_AFTER_429 = 5;

export interface RateBucket {
  name: string;
  perMinute: number;
}

export interface HttpWait {
  seconds: number;
  reason: 'rate_limit' | 'retry_after';
  bucket: string;
}

export interface ReadOnlyHttpOptions {
  ctx: Pick<Ctx, 'lookup' | 'config'>;
  /** Authorization header value for a request (fresh token when asked again after a 401). */
  authorization: (opts: { renew: boolean }) => Promise<string>;
  /** The single URL a POST may go to (an OAuth token endpoint); none: GET only. */
  tokenUrl?: string;
  onWait?: (wait: HttpWait) => void | Promise<void>;
  /** Test hook: how the client sleeps (default: real timers). */
  sleep?: (ms: number) => Promise<void>;
  fetchImpl?: typeof fetch;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Seconds (or an HTTP date) of a Retry-After header, in milliseconds; default when missing. */
export function retryAfterMs(value: string | null, now = Date.now()): number {
  if (!value) return 60_000;
  const seconds = Number(value.trim());
  if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? 60_000 : Math.max(0, at - now);
}

/** What a failed request means for the test and the worker: a step and a failure kind. */
export function httpFailure(status: number, what: string, detail = ''): SourceError {
  const suffix = detail ? `: ${detail.replace(/[\r\n]+/g, ' ').slice(0, 200)}` : '';
  if (status === 401) return new SourceError('login', `${what} refused the credentials (HTTP 401)${suffix}`, 'login');
  if (status === 403) return new SourceError('permission', `${what} answered 403: the account lacks a permission it needs${suffix}`, 'login');
  if (status === 429) return new SourceError('list', `${what} asks to wait (HTTP 429)${suffix}`, 'provider_limit');
  if (status === 404) return new SourceError('login', `${what} has no such account or path (HTTP 404)${suffix}`, 'login');
  return new SourceError('list', `${what} answered HTTP ${status}${suffix}`, 'protocol');
}

function networkFailure(error: unknown, host: string): SourceError {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const code = cause?.code ?? (error as { code?: string })?.code ?? '';
  const text = `${cause?.message ?? ''} ${(error as Error)?.message ?? ''}`;
  if ((error as Error)?.name === 'TimeoutError' || (error as Error)?.name === 'AbortError')
    return new SourceError('connect', `no answer from ${host} within ${REQUEST_TIMEOUT_MS / 1000} s`, 'connect');
  if (/^ERR_TLS|^ERR_SSL|CERT|^DEPTH_ZERO|^UNABLE_TO|^SELF_SIGNED|HOSTNAME/i.test(code) || /certificate|tls|ssl/i.test(text))
    return new SourceError('tls', `TLS with ${host} failed (${code || 'handshake'})`, 'tls');
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new SourceError('dns', `the name ${host} cannot be resolved (${code})`, 'connect');
  return new SourceError('connect', `cannot reach ${host} (${code || 'network error'})`, 'connect');
}

export class ReadOnlyHttp {
  private readonly sent = new Map<string, number[]>();
  private readonly checkedHosts = new Set<string>();
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly fetchImpl: typeof fetch;
  /** Requests sent (for tests and the activity log). */
  requests = 0;

  constructor(private readonly opts: ReadOnlyHttpOptions) {
    this.sleep = opts.sleep ?? realSleep;
    this.fetchImpl = opts.fetchImpl ?? fetch;
  }

  /**
   * The guard: GET anywhere the client reads; POST only to the token URL. Anything else throws
   * before the request exists.
   */
  static check(method: string, url: string, tokenUrl: string | undefined): void {
    const m = method.toUpperCase();
    if (m === 'GET') return;
    if (m === 'POST' && tokenUrl !== undefined && url === tokenUrl) return;
    const where = new URL(url);
    throw new ReadOnlyViolation(
      `${m} ${where.origin}${where.pathname}`,
      m === 'POST' ? 'a POST is sent only to the OAuth token URL' : 'only GET requests are sent to a help desk',
    );
  }

  /** Sends one request through the guard, the address check and the rate limit. */
  async send(method: string, url: string, init: { bucket: RateBucket; body?: string; headers?: Record<string, string>; auth?: boolean }): Promise<Response> {
    ReadOnlyHttp.check(method, url, this.opts.tokenUrl);
    const host = new URL(url).hostname;
    if (!this.checkedHosts.has(host)) {
      await resolveServer(this.opts.ctx, { host, port: 443, tls: 'tls' });
      this.checkedHosts.add(host);
    }
    let renew = false;
    for (let attempt = 0; ; attempt++) {
      await this.keepRate(init.bucket);
      const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'svc-migration', ...init.headers };
      if (init.auth !== false) headers.authorization = await this.opts.authorization({ renew });
      let response: Response;
      try {
        this.requests++;
        response = await this.fetchImpl(url, {
          method,
          headers,
          body: init.body,
          redirect: method === 'GET' ? 'follow' : 'manual',
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
      } catch (error) {
        throw networkFailure(error, host);
      }
      if (response.status === 429 && attempt < MAX_RETRIES_AFTER_429) {
        const waitMs = retryAfterMs(response.headers.get('retry-after'));
        await response.body?.cancel();
        if (waitMs > MAX_INLINE_WAIT_MS) throw new SourceError('list', `the provider asks to wait ${Math.ceil(waitMs / 1000)} s (HTTP 429)`, 'provider_limit');
        await this.opts.onWait?.({ seconds: Math.ceil(waitMs / 1000), reason: 'retry_after', bucket: init.bucket.name });
        await this.sleep(waitMs);
        continue;
      }
      // An expired access token: one new token, then the request again.
      if (response.status === 401 && !renew && init.auth !== false && this.opts.tokenUrl) {
        await response.body?.cancel();
        renew = true;
        continue;
      }
      return response;
    }
  }

  async getJson<T>(url: string, bucket: RateBucket, what: string): Promise<T> {
    const response = await this.send('GET', url, { bucket });
    if (!response.ok) throw httpFailure(response.status, what, await response.text().catch(() => ''));
    return (await response.json()) as T;
  }

  /** Keeps at most perMinute requests in any minute of the bucket; waits (and says so) otherwise. */
  private async keepRate(bucket: RateBucket): Promise<void> {
    const times = this.sent.get(bucket.name) ?? [];
    this.sent.set(bucket.name, times);
    const now = Date.now();
    while (times.length && times[0] <= now - 60_000) times.shift();
    if (times.length >= bucket.perMinute) {
      const waitMs = times[0] + 60_000 - now;
      await this.opts.onWait?.({ seconds: Math.ceil(waitMs / 1000), reason: 'rate_limit', bucket: bucket.name });
      await this.sleep(waitMs);
      const later = Date.now();
      while (times.length && times[0] <= later - 60_000) times.shift();
    }
    times.push(Date.now());
  }
}
