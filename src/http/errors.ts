// The one place where errors become HTTP answers: {"error":{"code","message",...extra}}.

import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ZodError } from 'zod';
import { MasterKeyError } from '../platform/crypto.js';
import { AppError, busy } from '../platform/errors.js';
import type { Logger } from '../platform/log.js';

export function errorBody(code: string, message: string, extra: Record<string, unknown> = {}) {
  return { error: { code, message, ...extra } };
}

/** The body of every error answer, as the API document shows it (components/schemas/Error). */
export const ErrorSchema = z
  .object({
    error: z
      .object({
        code: z.string().openapi({
          description:
            'snake_case: invalid_request, unauthorized, forbidden, not_found, conflict or a more precise code, too_large, unsupported_media_type, hosted_limit, rate_limited, busy…',
          example: 'invalid_request',
        }),
        message: z.string().openapi({ description: 'what went wrong, for people' }),
        issues: z
          .array(
            z.object({
              path: z.string().openapi({ description: 'the offending field: keys and indexes joined by dots ("" for the whole body)' }),
              message: z.string(),
            }),
          )
          .optional()
          .openapi({ description: 'invalid_request: one entry per offending field' }),
        limit: z.string().optional().openapi({ description: 'hosted_limit: the setting that sets the limit (SVC_…)' }),
        retry_after: z.number().int().optional().openapi({ description: 'rate_limited, busy: seconds to wait (also the Retry-After header)' }),
        request_id: z.string().optional(),
      })
      .catchall(z.unknown())
      .openapi({ description: 'further fields where a code names them (e.g. migration_state: state and allowed_actions)' }),
  })
  .openapi('Error');

export function zodIssues(error: ZodError) {
  return error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
}

const HTTP_CODES: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  503: 'busy',
};

/** SQLite's lock stayed taken past busy_timeout (another process writing): answered like an exhausted pool. */
function isSqliteBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_'));
}

export function toErrorResponse(err: unknown, c: Context, log: Logger): Response {
  if (isSqliteBusy(err)) err = busy(1, 'the database is locked by another writer; try again shortly');
  if (err instanceof AppError) {
    const headers: Record<string, string> = {};
    if ((err.status === 429 || err.status === 503) && typeof err.extra.retry_after === 'number') headers['Retry-After'] = String(err.extra.retry_after);
    return c.json(errorBody(err.code, err.message, err.extra), err.status as 400, headers);
  }
  if (err instanceof HTTPException) {
    const status = err.status;
    const message = status === 400 && /JSON/i.test(err.message) ? 'request body is not valid JSON' : err.message || 'request refused';
    return c.json(errorBody(HTTP_CODES[status] ?? 'invalid_request', message), status);
  }
  if (err instanceof SyntaxError) return c.json(errorBody('invalid_request', 'request body is not valid JSON'), 400);
  const requestId = c.get('requestId' as never) as string | undefined;
  log.error(err instanceof MasterKeyError ? 'master key error' : 'request failed', {
    request_id: requestId,
    method: c.req.method,
    path: c.req.path,
    error: err,
    stack: err instanceof Error ? err.stack?.split('\n').slice(0, 6).join(' | ') : undefined,
  });
  return c.json(errorBody('internal', 'internal error; see the server log', { request_id: requestId }), 500);
}
