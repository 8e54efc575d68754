// Small helpers for declaring routes with their zod schemas (one OpenAPI document comes from them).
import { z } from '@hono/zod-openapi';
import { FREE_JSON_MAX_DEPTH, freeJsonProblem } from '../platform/json-limits.js';
import { charCount } from '../platform/text.js';

/**
 * A text of at most `max` characters (code points, as people count them: an emoji is one, not the
 * two UTF-16 units zod's max would count); up to twice that many UTF-16 units get past the first check.
 */
export const textUpTo = (max: number, min = 0) =>
  z
    .string()
    .min(min)
    .max(max * 2)
    .refine((v) => charCount(v) <= max, { message: `at most ${max} characters` })
    .openapi({ maxLength: max });

export const jsonBody = <T extends z.ZodType>(schema: T, description?: string) => ({
  content: { 'application/json': { schema } },
  required: true,
  description,
});

/** A JSON body the client may leave out (the route then reads `c.req.valid('json') ?? {}`). */
export const optionalJsonBody = <T extends z.ZodType>(schema: T, description?: string) => ({
  content: { 'application/json': { schema } },
  required: false,
  description,
});

export const jsonAnswer = <T extends z.ZodType>(schema: T, description: string) => ({
  content: { 'application/json': { schema } },
  description,
});

export const noContent = (description: string) => ({ description });

export const bearer = [{ bearer: [] as string[] }];

export const idParam = (name: string, example: string) =>
  z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name, in: 'path' }, example });

/**
 * A free-form JSON object (contact attributes, feedback metadata): keys of at most 100 characters,
 * objects and arrays nested at most FREE_JSON_MAX_DEPTH levels (the object itself is level 1),
 * at most `maxBytes` of JSON; the path of the offending field goes to `issues`.
 */
export const freeJsonObject = (maxBytes: number, description: string) =>
  z
    .record(z.string().max(100), z.unknown())
    .superRefine((value, check) => {
      const problem = freeJsonProblem(value, maxBytes);
      if (problem) check.addIssue({ code: 'custom', message: problem.message, path: problem.path });
    })
    .openapi({
      description: `${description}; objects and arrays nest at most ${FREE_JSON_MAX_DEPTH} levels (this object is level 1), at most ${maxBytes} bytes of JSON`,
    });
