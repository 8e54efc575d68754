// The typed client: paths and schemas come from the server's own /v1/openapi.json at build time.
import createClient from 'openapi-fetch';
import type { components, paths } from '../../generated/api';
import { t } from './i18n';

export type Schemas = components['schemas'];
export type Conversation = Schemas['Conversation'];
export type ConversationListItem = Schemas['ConversationListItem'];
export type Message = Schemas['Message'];
export type Inbox = Schemas['Inbox'];
/** The JSON body an operation takes. */
export type BodyOf<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { requestBody?: { content: { 'application/json': infer B } } }
  ? B
  : never;

export const api = createClient<paths>({ baseUrl: '', credentials: 'same-origin' });

let workspaceId: string | null = null;
let onUnauthorized: () => void = () => {};

export function useWorkspace(id: string | null) {
  workspaceId = id;
}
export function whenUnauthorized(handler: () => void) {
  onUnauthorized = handler;
}

api.use({
  onRequest({ request }) {
    if (workspaceId) request.headers.set('Svc-Workspace', workspaceId);
    return request;
  },
  onResponse({ response }) {
    if (response.status === 401) onUnauthorized();
    return response;
  },
});

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The data of a call, or an ApiError with the server's code and message. */
export async function must<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await call;
  } catch (e) {
    throw new ApiError(0, 'network', e instanceof Error ? e.message : String(e));
  }
  if (result.error !== undefined || !result.response.ok) {
    const body = result.error as { error?: { code?: string; message?: string } } | undefined;
    throw new ApiError(result.response.status, body?.error?.code ?? 'error', body?.error?.message ?? result.response.statusText);
  }
  return result.data as T;
}

/**
 * What to tell the person about a failed call, in their language when the cause is not theirs to
 * fix in the form (no connection, the server failing, too many requests); otherwise the server's
 * message, which names the field or the conflict.
 */
export function errorText(e: unknown): string {
  if (e instanceof ApiError) {
    if (e.status === 0) return t('error.network');
    if (e.status === 429) return t('error.rate_limited');
    if (e.status >= 500) return t('error.server');
  }
  return e instanceof Error ? e.message : String(e);
}
