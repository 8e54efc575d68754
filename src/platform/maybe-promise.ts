// A value that is there at once on the fast path (a cached credential, a SQLite read) and awaited
// otherwise. Chaining through `andThen` keeps the fast path free of promise steps: on the request
// path each awaited promise costs a trip through the microtask queue, several per request.
export type MaybePromise<T> = T | Promise<T>;

/** `next(value)` now when `value` is there, after it settles otherwise. */
export function andThen<T, R>(value: MaybePromise<T>, next: (value: T) => MaybePromise<R>): MaybePromise<R> {
  return value instanceof Promise ? value.then(next) : next(value);
}
