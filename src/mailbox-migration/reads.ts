// What a migration shows besides itself: the preview of what will be copied, the copy errors and the
// activity log.
import { z } from 'zod';
import type { Access } from '../auth/access.js';
import { knownContactEmails } from '../contacts/imported.js';
import type { Ctx } from '../context.js';
import type { MailboxMigrationItemsTable } from '../db/schema.js';
import { decodeCursor, toPage } from '../platform/pagination.js';
import { folderLabelsOf, THREAD_MEMBER_STATUSES, threadItemsQuery } from './copy/copy.js';
import { importedStatus, labelsOfItem } from './copy/plan.js';
import { teamAddressesOf } from './copy/team.js';
import { requireAction } from './states.js';
import { getMigration } from './store.js';

export const PREVIEW_DEFAULT = 10;
export async function previewMigration(ctx: Ctx, access: Access, id: string, limit = PREVIEW_DEFAULT) {
  const m = await getMigration(ctx.db, access.workspaceId, id);
  requireAction(m, 'preview');
  const threads = await ctx.db
    .selectFrom('mailbox_migration_threads')
    .selectAll()
    .where('migration_id', '=', m.id)
    .where('status', 'in', ['planned', 'copied'])
    .orderBy('newest_at', 'desc')
    .orderBy('thread_key')
    .limit(limit)
    .execute();
  const keys = threads.map((t) => t.thread_key);
  const items = keys.length
    ? (
        await threadItemsQuery(ctx.db, m.id, keys)
          .select(['thread_key', 'folder', 'gmail_labels', 'sent_at', 'from_address', 'from_name', 'subject', 'team', 'status', 'size'])
          .execute()
      ).filter((i) => THREAD_MEMBER_STATUSES.has(i.status))
    : [];
  const labelOf = await folderLabelsOf(ctx, m);
  const mapping = JSON.parse(m.folder_labels) as Record<string, string | null>;
  const team = await teamAddressesOf(ctx, m);
  const customers = threads.map((t) => t.customer_address).filter((a): a is string => !!a);
  const existing = await knownContactEmails(ctx.db, m.workspace_id, customers);
  const now = ctx.clock.now();
  return {
    data: threads.map((t) => {
      const own = items.filter((i) => i.thread_key === t.thread_key && i.status !== 'duplicate');
      const last = own[own.length - 1];
      const labels = [...new Set(items.filter((i) => i.thread_key === t.thread_key).flatMap((i) => labelsOfItem(i, labelOf, mapping)))].sort();
      return {
        subject: t.subject,
        contact: { email: t.customer_address, name: t.customer_name, exists: t.customer_address ? existing.has(t.customer_address) : false },
        status: last
          ? importedStatus({ lastMessageAt: new Date(last.sent_at), teamWroteLast: last.team === 1, closeAfterDays: m.close_after_days, now })
          : 'closed',
        imported: true,
        labels,
        copied: t.status === 'copied',
        messages: own.map((i) => ({
          direction: i.team ? 'out' : 'in',
          from: { name: i.from_name, address: i.from_address },
          author_member_id: i.team && i.from_address ? (team.members.get(i.from_address) ?? null) : null,
          subject: i.subject,
          sent_at: i.sent_at,
          size: Number(i.size),
        })),
        first_message_at: own[0]?.sent_at ?? null,
        last_message_at: last?.sent_at ?? null,
      };
    }),
  };
}

const errorCursor = z.string();

/** Messages that failed (with the reason), and why the migration needs attention, if it does. */
export async function listErrors(ctx: Pick<Ctx, 'db'>, access: Access, id: string, page: { limit?: number; cursor?: string }) {
  const m = await getMigration(ctx.db, access.workspaceId, id);
  const limit = page.limit ?? 50;
  const after = decodeCursor(page.cursor, errorCursor);
  let q = ctx.db.selectFrom('mailbox_migration_items').selectAll().where('migration_id', '=', m.id).where('status', '=', 'failed');
  if (after) q = q.where('source_key', '>', after);
  const rows = await q
    .orderBy('source_key')
    .limit(limit + 1)
    .execute();
  const blocked = await ctx.db
    .selectFrom('mailbox_migration_log')
    .select(['at', 'detail'])
    .where('migration_id', '=', m.id)
    .where('action', '=', 'command_blocked')
    .orderBy('id', 'desc')
    .limit(20)
    .execute();
  const page_ = toPage(
    rows,
    limit,
    (r) => r.source_key,
    (r: MailboxMigrationItemsTable) => ({
      source: { folder: r.folder, uid: r.uid === null ? null : Number(r.uid), key: r.source_key },
      message_id_header: r.rfc_id,
      subject: r.subject,
      sent_at: r.sent_at,
      error: r.error,
      attempts: r.attempts,
    }),
  );
  return {
    ...page_,
    attention: m.state === 'needs_attention' ? { reason: m.attention_reason, message: m.attention_message, retry_at: m.attention_retry_at } : null,
    blocked_commands: blocked.map((b) => ({ at: b.at, ...(b.detail ? (JSON.parse(b.detail) as Record<string, unknown>) : {}) })),
  };
}

export async function listActivity(ctx: Pick<Ctx, 'db'>, access: Access, id: string, page: { limit?: number; cursor?: string }) {
  const m = await getMigration(ctx.db, access.workspaceId, id);
  const limit = page.limit ?? 50;
  const before = decodeCursor(page.cursor, z.string());
  let q = ctx.db.selectFrom('mailbox_migration_log').selectAll().where('migration_id', '=', m.id);
  if (before) q = q.where('id', '<', before);
  const rows = await q
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  return toPage(
    rows,
    limit,
    (r) => r.id,
    (r) => ({
      id: r.id,
      at: r.at,
      actor: { type: r.actor_type, id: r.actor_id },
      action: r.action,
      detail: r.detail ? (JSON.parse(r.detail) as Record<string, unknown>) : null,
    }),
  );
}
