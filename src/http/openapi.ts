// Small helpers for declaring routes with their zod schemas (one OpenAPI document comes from them).
import { z } from '@hono/zod-openapi';

export const jsonBody = <T extends z.ZodType>(schema: T, description?: string) => ({
  content: { 'application/json': { schema } },
  required: true,
  description,
});

export const jsonAnswer = <T extends z.ZodType>(schema: T, description: string) => ({
  content: { 'application/json': { schema } },
  description,
});

export const noContent = (description: string) => ({ description });

export const bearer = [{ bearer: [] as string[] }];

export const idParam = (name: string, example: string) =>
  z.string().min(1).max(100).openapi({ param: { name, in: 'path' }, example });
