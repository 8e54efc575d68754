// Every JSON request body is read here once, before its route's schema sees it: bytes that are not
// UTF-8, text that is not JSON, nesting deeper than MAX_BODY_DEPTH and strings or keys that are not
// valid Unicode (lone surrogates such as "\ud800", which would be stored as U+FFFD) or hold U+0000
// are refused with 400 invalid_request and the path of the offending field in `issues`.
import type { Context, Next } from 'hono';
import { invalid } from '../platform/errors.js';
import { findJsonProblem, formatJsonPath } from '../platform/json-limits.js';

/** No route's body nests this deep; free-form fields have their own, smaller limit (FREE_JSON_MAX_DEPTH). */
export const MAX_BODY_DEPTH = 32;

const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;

export function isJsonContentType(contentType: string | undefined): boolean {
  return !!contentType && JSON_MEDIA_TYPE.test(contentType.split(';')[0].trim());
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Route middleware for routes that take JSON; other content types are left to the route (415). */
export async function checkJsonBody(c: Context, next: Next) {
  if (!isJsonContentType(c.req.header('content-type'))) return next();
  const bytes = await c.req.arrayBuffer();
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw invalid('request body is not valid UTF-8');
  }
  if (text.trim()) {
    let value: unknown;
    try {
      // V8's JSON.parse does not recurse, so even a 1 MiB run of "[" parses without a stack overflow.
      value = JSON.parse(text);
    } catch {
      throw invalid('request body is not valid JSON');
    }
    const problem = findJsonProblem(value, MAX_BODY_DEPTH);
    if (problem) {
      const path = formatJsonPath(problem.path);
      throw invalid(`${path || 'the body'}: ${problem.message}`, { issues: [{ path, message: problem.message }] });
    }
  }
  // The route's validator (or handler) reads the checked text from hono's body cache.
  (c.req.bodyCache as Record<string, unknown>).text = Promise.resolve(text);
  return next();
}
