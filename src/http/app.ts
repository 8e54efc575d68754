// The HTTP application: middleware, error mapping, and the routes it is given (the route table is
// src/server/routes.ts).
import type { ServerResponse } from 'node:http';
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler, Next } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { ZodError } from 'zod';
import type { Access } from '../auth/access.js';
import type { Identity } from '../auth/credentials.js';
import type { Ctx } from '../context.js';
import { invalid } from '../platform/errors.js';
import { randomText } from '../platform/ids.js';
import type { MaybePromise } from '../platform/maybe-promise.js';
import { serveApiDocument } from './api-document.js';
import { clientAddress } from './client-address.js';
import { dispatchInline } from './dispatch.js';
import { ErrorSchema, errorBody, toErrorResponse, zodIssues } from './errors.js';
import { checkJsonBody } from './json-body.js';
import { ApiResponse, type CommonHeader } from './response.js';
import { RememberingRouter } from './router.js';

export type AppEnv = { Variables: { requestId: string; identity?: Identity; access?: Access } };
export type ApiApp = OpenAPIHono<AppEnv>;

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** Routes whose bodies may be larger than DEFAULT_BODY_LIMIT register their own limit here. */
export interface BodyLimitRule {
  method: string;
  path: RegExp;
  maxBytes: (ctx: Ctx) => number;
  /**
   * The route reads the node request's body itself (a hot path for which hono's node adapter would
   * build a web Request first): only a Content-Length over maxBytes is refused here.
   */
  readsOwnBody?: boolean;
}

/** A feature's routes, as the route table lists them. */
export interface FeatureRoutes {
  register(app: ApiApp, ctx: Ctx): void;
  bodyLimits?: BodyLimitRule[];
}

export function createApp(ctx: Ctx, routeTable: readonly FeatureRoutes[]): ApiApp {
  const app: ApiApp = new OpenAPIHono<AppEnv>({
    router: new RememberingRouter(),
    defaultHook: (result, c) => {
      if (!result.success) {
        return c.json(errorBody('invalid_request', 'the request does not match the expected shape', { issues: zodIssues(result.error) }), 400);
      }
    },
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'an API key (svc_sk_…) or a session token (svc_ses_…)',
  });
  app.openAPIRegistry.register('Error', ErrorSchema);
  takeJsonBodiesThroughTheCheck(app);

  const rules: BodyLimitRule[] = routeTable.flatMap((r) => r.bodyLimits ?? []);
  // One middleware for everything every request passes (each layer of hono's compose costs promise steps).
  app.use('*', observe(ctx, checkRequest(ctx, rules)) as MiddlewareHandler<AppEnv>);
  const onError = (err: Error, c: Context<AppEnv>) => toErrorResponse(err, c, ctx.log);
  const notFound = (c: Context<AppEnv>) => c.json(errorBody('not_found', 'no such route'), 404);
  app.onError(onError);
  app.notFound(notFound);
  dispatchInline(app, { onError, notFound });

  for (const feature of routeTable) feature.register(app, ctx);

  serveApiDocument(app, ctx, '/v1/openapi.json');
  return app;
}

/**
 * Every route declared with a JSON body reads it through checkJsonBody first (UTF-8, JSON, depth,
 * Unicode). A route for credentials (security: bearer) authorizes before it validates: see
 * deferValidation.
 */
function takeJsonBodiesThroughTheCheck(app: ApiApp) {
  const declare = app.openapi;
  app.openapi = ((route, handler, hook) => {
    const content = route.request?.body?.content ?? {};
    let own = route.middleware ? (Array.isArray(route.middleware) ? route.middleware : [route.middleware]) : [];
    if (Object.keys(content).some((type) => /json/i.test(type))) own = [checkJsonBody, ...own];
    // A route without a request schema has nothing to validate (and no layer to defer).
    if (!hook && route.request && route.security?.some((requirement) => 'bearer' in requirement)) {
      own = [deferValidation, ...own];
      hook = keepValidationProblem as never;
    }
    if (own.length > 0) route = { ...route, middleware: own };
    return declare(route, handler, hook);
  }) as ApiApp['openapi'];
}

/**
 * Authorize before validating: on a route for credentials, a request whose params, query or body
 * do not fit the route's schema still reaches the handler, which checks who calls and what they may
 * do first; the 400 comes when the handler reads its input (c.req.valid), so a caller without the
 * permission gets 403 whatever the ids and the body (issue 32). A handler that answered without
 * reading its input still answers 400. Bytes that are no JSON at all are refused before (checkJsonBody).
 */
const PROBLEM = Symbol('validation problem');
type Issues = ReturnType<typeof zodIssues>;
type WithProblem = { [PROBLEM]?: { byTarget: Map<string, Issues>; surfaced: boolean } };

function keepValidationProblem(result: { success: boolean; error?: ZodError; target: string }, c: Context<AppEnv>) {
  if (result.success) return undefined;
  const req = c.req as typeof c.req & WithProblem;
  let problem = req[PROBLEM];
  if (!problem) {
    const found = { byTarget: new Map<string, Issues>(), surfaced: false };
    problem = found;
    req[PROBLEM] = found;
    const valid = req.valid.bind(req);
    req.valid = ((target: string) => {
      const issues = found.byTarget.get(target);
      if (!issues) return valid(target as never);
      found.surfaced = true;
      throw invalid('the request does not match the expected shape', { issues });
    }) as never;
  }
  problem.byTarget.set(result.target, zodIssues(result.error!));
  // The validator goes on to the handler (its value undefined, never read: c.req.valid throws).
  return { response: undefined };
}

function deferValidation(c: Context<AppEnv>, next: Next) {
  const after = () => {
    const problem = (c.req as WithProblem)[PROBLEM];
    if (problem && !problem.surfaced && c.res.status < 400) {
      const issues = [...problem.byTarget.values()].flat();
      c.res = c.json(errorBody('invalid_request', 'the request does not match the expected shape', { issues }), 400);
    }
  };
  const done = next();
  return done instanceof Promise ? done.then(after) : after();
}

/** The URL and body checks every request passes before its route; `next` when they pass. */
function checkRequest(ctx: Ctx, rules: BodyLimitRule[]) {
  return (c: Context<AppEnv>, next: Next) => {
    // Postgres text cannot hold U+0000 and no id or query value needs it: refused here, not as a 500.
    if (c.req.url.includes('%00')) throw invalid('the URL must not contain %00 (NUL)');
    // Looking at the body of a GET would make the node adapter build a full Request for nothing.
    if (c.req.method === 'GET' || c.req.method === 'HEAD' || c.req.method === 'OPTIONS') return next();
    const rule = rules.find((r) => r.method === c.req.method && r.path.test(c.req.path));
    const maxSize = rule ? rule.maxBytes(ctx) : DEFAULT_BODY_LIMIT;
    if (rule?.readsOwnBody && (c.env as { incoming?: unknown } | undefined)?.incoming) {
      const length = Number(c.req.header('content-length') ?? 0);
      if (length > maxSize) return c.json(errorBody('too_large', `request body is larger than ${maxSize} bytes`), 413, { connection: 'close' });
      return next();
    }
    return bodyLimit({
      maxSize,
      // The rest of the body is never read, so the connection cannot carry another request.
      onError: (c) => c.json(errorBody('too_large', `request body is larger than ${maxSize} bytes`), 413, { connection: 'close' }),
    })(c, next);
  };
}

/** Strict-Transport-Security with an https SVC_PUBLIC_URL (one year; subdomains are not this server's to pin). */
export const HSTS_VALUE = 'max-age=31536000';

// Request ids: a random prefix per process and a counter (random bytes per request cost a system call).
const requestIdPrefix = randomText(8) + '-';
let requestCounter = 0;

type HttpSeries = { count: { inc(): void }; seconds: { observe(value: number): void } };

/**
 * Request id, one log line per request, and the HTTP metrics (labelled by route pattern, never the
 * raw path), around `check` (which calls the route's `next` when the request may go on).
 */
function observe(ctx: Ctx, check: (c: Context<AppEnv>, next: Next) => Promise<unknown> | unknown) {
  // The metric series of each method, route and status, looked up once (prom-client hashes the
  // labels on every call otherwise). Bounded: routes are patterns, methods and statuses few.
  const series = new Map<string, HttpSeries>();
  const seriesOf = (method: string, route: string, status: string): HttpSeries => {
    const key = `${method} ${route} ${status}`;
    let s = series.get(key);
    if (!s) {
      s = { count: ctx.metrics.httpRequests.labels(method, route, status), seconds: ctx.metrics.httpSeconds.labels(method, route, status) };
      series.set(key, s);
    }
    return s;
  };
  const hsts: CommonHeader[] = ctx.config.hsts ? [['strict-transport-security', HSTS_VALUE]] : [];
  const apiHeaders: CommonHeader[] = [['x-content-type-options', 'nosniff'], ['cache-control', 'no-store'], ...hsts];
  const otherHeaders = hsts;
  return (c: Context<AppEnv>, next: Next): MaybePromise<void> => {
    const started = process.hrtime.bigint();
    const incoming = c.req.header('x-request-id');
    const requestId = incoming && /^[A-Za-z0-9._-]{1,64}$/.test(incoming) ? incoming : `${requestIdPrefix}${(++requestCounter).toString(36)}`;
    c.set('requestId', requestId);
    // API answers hold conversation data: never cached (it would outlive a sign-out) and never
    // sniffed as another type. A route's own value (a cacheable file) replaces these.
    const fixed = c.req.path.startsWith('/v1/') ? apiHeaders : otherHeaders;
    // On svc's node server the headers go with the outgoing response, added to the answer's own
    // when its head is written (src/http/response.ts). Elsewhere (a WebSocket upgrade, tests calling
    // app.request, a plain node server) they are set before the handler answers: on node's response
    // when there is one, else on the context.
    const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
    if (outgoing instanceof ApiResponse) outgoing.carry(requestId, fixed);
    else {
      const set = outgoing ? (name: string, value: string) => outgoing.setHeader(name, value) : (name: string, value: string) => c.header(name, value);
      set('x-request-id', requestId);
      for (const [name, value] of fixed) set(name, value);
    }
    // Synchronous while the route answers at once (see dispatch.ts), so the answer is too.
    let checked: unknown;
    try {
      checked = check(c, next);
    } catch (error) {
      return failed(c, error, started, requestId);
    }
    if (checked instanceof Promise) {
      return checked.then(
        (refusal) => answered(c, refusal, started, requestId),
        (error) => failed(c, error, started, requestId),
      );
    }
    return answered(c, checked, started, requestId);
  };

  // As hono's compose does with a middleware's answer: a refusal (413) is the response.
  function answered(c: Context<AppEnv>, refusal: unknown, started: bigint, requestId: string) {
    if (refusal instanceof Response && !c.finalized) c.res = refusal;
    finish(c, started, requestId);
  }

  // What compose would do with a middleware's error: the onError answer, still observed.
  function failed(c: Context<AppEnv>, error: unknown, started: bigint, requestId: string) {
    c.res = toErrorResponse(error, c, ctx.log);
    finish(c, started, requestId);
  }

  function finish(c: Context<AppEnv>, started: bigint, requestId: string) {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    // After next(), routePath is the pattern of the last handler that ran; only the catch-all
    // middleware ran when no route matched.
    const routePath = c.req.routePath; // hono maps every matched route to read it
    const route = routePath && !routePath.endsWith('*') ? routePath : 'unmatched';
    const method = c.req.method;
    const status = c.res.status;
    const { count, seconds: duration } = seriesOf(method, route, String(status));
    count.inc();
    duration.observe(seconds);
    ctx.log.info('request', {
      method,
      route,
      // A token in the path (rating links, unsubscribe links) is a credential: logged as the pattern only.
      path: route.includes(':token') ? route : c.req.path,
      status,
      duration_ms: Math.round(seconds * 1e5) / 100,
      request_id: requestId,
      client: clientAddress(c, ctx.config.clientAddress),
    });
  }
}
