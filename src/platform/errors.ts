// Typed errors that services throw. src/http/errors.ts maps them to answers, src/cli.ts to exit lines.

export type ErrorExtra = Record<string, unknown>;

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: ErrorExtra = {},
  ) {
    super(message);
  }
}

export const invalid = (message: string, extra: ErrorExtra = {}) => new AppError(400, 'invalid_request', message, extra);
export const unauthorized = (message = 'missing or invalid credentials') => new AppError(401, 'unauthorized', message);
export const forbidden = (message = 'not allowed') => new AppError(403, 'forbidden', message);
export const notFound = (what: string) => new AppError(404, 'not_found', `${what} not found`);
export const conflict = (message: string, code = 'conflict', extra: ErrorExtra = {}) => new AppError(409, code, message, extra);
export const tooLarge = (message: string) => new AppError(413, 'too_large', message);
export const hostedLimit = (setting: string, message: string) => new AppError(422, 'hosted_limit', message, { limit: setting });
export const rateLimited = (retryAfterSeconds: number, message = 'too many requests, try again later') =>
  new AppError(429, 'rate_limited', message, { retry_after: retryAfterSeconds });

/** The database has no connection free (or is locked) right now: 503 with Retry-After; nothing was changed. */
export const busy = (retryAfterSeconds = 1, message = 'the server is busy, try again shortly') =>
  new AppError(503, 'busy', message, { retry_after: retryAfterSeconds });

/** Thrown by a command after its one error line is written; main.ts ends the process quietly. */
export class ExitSignal extends Error {}
