// Quotas on what visitors upload through the widget (issue 32): a visitor could otherwise fill the
// disk with files never sent (they are kept a day). Three budgets, each counted in widget_uploads:
// unsent bytes of one session, unsent bytes from one client address (every session from it), and
// bytes uploaded to one workspace in the last 24 hours, sent or not. An upload may use what is left
// of the smallest; beyond it the answer is 429 upload_quota_exceeded with Retry-After.
import { createHash } from 'node:crypto';
import type { Ctx } from '../context.js';
import type { Db } from '../db/schema.js';
import { DAY, iso } from '../platform/clock.js';
import { AppError } from '../platform/errors.js';

export type UploadQuota = 'session' | 'address' | 'workspace';

export interface Uploader {
  workspaceId: string;
  sessionId: string;
  /** The client address (src/http/client-address.ts); only its hash is stored. */
  address: string;
}

export interface UploadBudget {
  /** Bytes the next upload may have. */
  remaining: number;
  /** The 429 to throw when the upload does not fit. */
  exceeded(): AppError;
}

const WINDOW_MS = DAY;

export function addressHash(address: string): string {
  return createHash('sha256').update(`widget_upload\0${address}`).digest('base64url');
}

const WHAT: Record<UploadQuota, string> = {
  session: 'files uploaded in this chat and not sent yet',
  address: 'files uploaded from this address and not sent yet',
  workspace: 'files uploaded to this workspace in the last 24 hours',
};

export function uploadQuotaExceeded(quota: UploadQuota, limit: number, retryAfter: number): AppError {
  return new AppError(
    429,
    'upload_quota_exceeded',
    `${WHAT[quota]} would come to more than ${limit} bytes; send or wait for older uploads (unsent ones are removed after a day), or try again in ${retryAfter} s`,
    { quota, limit_bytes: limit, retry_after: retryAfter },
  );
}

/** What is left of the three budgets for this uploader: the smallest decides. */
export async function uploadBudget(ctx: Pick<Ctx, 'db' | 'clock' | 'config'>, who: Uploader): Promise<UploadBudget> {
  const now = ctx.clock.now().getTime();
  const since = iso(now - WINDOW_MS);
  const limits = ctx.config.widgetUploads;
  const used = (where: (q: ReturnType<typeof base>) => ReturnType<typeof base>) => where(base(ctx.db, since)).executeTakeFirstOrThrow();
  const [session, address, workspace] = await Promise.all([
    used((q) => q.where('session_id', '=', who.sessionId).where('sent', '=', 0)),
    used((q) => q.where('address_hash', '=', addressHash(who.address)).where('sent', '=', 0)),
    used((q) => q.where('workspace_id', '=', who.workspaceId)),
  ]);
  const budgets = [
    { quota: 'session' as const, limit: limits.sessionBytes, ...session },
    { quota: 'address' as const, limit: limits.addressBytes, ...address },
    { quota: 'workspace' as const, limit: limits.workspaceDailyBytes, ...workspace },
  ].map((b) => ({ ...b, remaining: b.limit - Number(b.bytes ?? 0) }));
  const tightest = budgets.reduce((a, b) => (b.remaining < a.remaining ? b : a));
  return {
    remaining: Math.max(0, tightest.remaining),
    exceeded() {
      // The oldest counted upload leaves the budget a day after it came (sooner when it is sent).
      const frees = tightest.oldest ? Date.parse(tightest.oldest) + WINDOW_MS : now;
      return uploadQuotaExceeded(tightest.quota, tightest.limit, Math.max(1, Math.ceil((frees - now) / 1000)));
    },
  };
}

function base(db: Db, since: string) {
  return db
    .selectFrom('widget_uploads')
    .select((eb) => [eb.fn.sum<number | string | null>('size').as('bytes'), eb.fn.min<string | null>('created_at').as('oldest')])
    .where('created_at', '>', since);
}

/** Counts a stored upload; rows of sent uploads that left the window go at the same time. */
export async function recordUpload(ctx: Pick<Ctx, 'db' | 'clock'>, who: Uploader, upload: { id: string; size: number; created_at: string }): Promise<void> {
  await ctx.db
    .insertInto('widget_uploads')
    .values({
      attachment_id: upload.id,
      workspace_id: who.workspaceId,
      session_id: who.sessionId,
      address_hash: addressHash(who.address),
      size: upload.size,
      sent: 0,
      created_at: upload.created_at,
    })
    .execute();
  await ctx.db
    .deleteFrom('widget_uploads')
    .where('workspace_id', '=', who.workspaceId)
    .where('created_at', '<=', iso(ctx.clock.now().getTime() - WINDOW_MS))
    .where('sent', '=', 1)
    .execute();
}

/** The uploads a message now carries no longer count against the unsent budgets. */
export async function markUploadsSent(db: Db, attachmentIds: readonly string[]): Promise<void> {
  if (attachmentIds.length > 0) await db.updateTable('widget_uploads').set({ sent: 1 }).where('attachment_id', 'in', attachmentIds).execute();
}
