// The app's entry (`fetch`): hono's dispatch, with a compose that stays synchronous while every
// layer answers at once. Hono's own compose is an async function, so an app with a middleware
// answers every request with a promise, even when nothing was awaited (a cached API key on SQLite).
// @hono/node-server writes an answer given at once from inside node's parser callback; for a
// promise it adds a close listener per request and writes the answer from the microtask queue,
// after node's callback scope. Under load over real sockets that path cost svc more than the
// in-process figures showed (see src/http/README.md, the request path's speed).
// The semantics are those of hono 4's compose and dispatch: each layer's index in `c.req.routeIndex`,
// an error thrown by a layer becomes the error handler's answer for the layers around it, a layer
// that answers nothing falls through to the not-found handler, HEAD goes to hono's own dispatch.
import { Context, type Env, type ErrorHandler, type Hono, type NotFoundHandler } from 'hono';

type Layer = (c: Context, next: () => unknown) => unknown;
type MatchedLayers = [[Layer, unknown], unknown][];

const isPromise = (value: unknown): value is Promise<unknown> => value instanceof Promise;

/** Replaces `app.fetch` with the inline dispatch; `handlers` are the ones given to `app.onError` and `app.notFound`. */
export function dispatchInline<E extends Env>(app: Hono<E>, handlers: { onError: ErrorHandler<E>; notFound: NotFoundHandler<E> }): void {
  const honoFetch = app.fetch;
  const onError = handlers.onError as unknown as ErrorHandler;
  const onNotFound = handlers.notFound as unknown as NotFoundHandler;
  app.fetch = (request: Request, env?: unknown, executionCtx?: unknown) => {
    if (request.method === 'HEAD') return honoFetch(request, env as never, executionCtx as never);
    const path = app.getPath(request, { env: env as never });
    const matchResult = app.router.match(request.method, path);
    const c = new Context(request, { path, matchResult, env, executionCtx: executionCtx as never, notFoundHandler: onNotFound } as never);
    const handleError = (err: unknown) => {
      if (err instanceof Error) return onError(err, c);
      throw err;
    };
    try {
      const done = compose(matchResult[0] as unknown as MatchedLayers, c, onError, onNotFound);
      return isPromise(done) ? done.then(finalized).catch(handleError) : finalized(done);
    } catch (err) {
      return handleError(err);
    }
  };
}

function finalized(c: Context): Response {
  if (!c.finalized) throw new Error('Context is not finalized. Did you forget to return a Response object or `await next()`?');
  return c.res;
}

/** hono's compose for one request, returning the context at once when no layer returned a promise. */
function compose(layers: MatchedLayers, c: Context, onError: ErrorHandler, onNotFound: NotFoundHandler): Context | Promise<Context> {
  let index = -1;
  const settle = (res: unknown, isError: boolean): Context => {
    if (res && (c.finalized === false || isError)) c.res = res as Response;
    return c;
  };
  const failed = (err: unknown): Context | Promise<Context> => {
    if (!(err instanceof Error)) throw err;
    c.error = err;
    const res = onError(err, c);
    return isPromise(res) ? res.then((r) => settle(r, true)) : settle(res, true);
  };
  const dispatch = (i: number): Context | Promise<Context> => {
    if (i <= index) return Promise.reject(new Error('next() called multiple times'));
    index = i;
    const layer = layers[i]?.[0][0];
    if (!layer) {
      if (c.finalized !== false) return c;
      const res = onNotFound(c);
      return isPromise(res) ? res.then((r) => settle(r, false)) : settle(res, false);
    }
    c.req.routeIndex = i;
    let res: unknown;
    try {
      res = layer(c, () => dispatch(i + 1));
    } catch (err) {
      return failed(err);
    }
    return isPromise(res) ? res.then((r) => settle(r, false), failed) : settle(res, false);
  };
  return dispatch(0);
}
