// Usage figures of a workspace per month (GET /v1/usage): conversations and messages that count
// (live) and those a migration imported (counted in the month of the import), and stored bytes.
import { sql } from 'kysely';
import type { Db } from '../db/schema.js';

export interface MonthUsage {
  conversationsBilled: number;
  conversationsImported: number;
  messagesBilled: number;
  messagesImported: number;
  bytesAdded: number;
}

/** Months are 'YYYY-MM' (UTC); `beforeMonth` is the first month not counted. */
export async function usageByMonth(db: Db, workspaceId: string, range: { fromMonth: string; beforeMonth: string }) {
  const from = `${range.fromMonth}-01`;
  const before = `${range.beforeMonth}-01`;
  const month = (column: string) => sql<string>`substr(${sql.ref(column)}, 1, 7)`;
  const n = sql<number>`count(*)`;
  const [convBilled, convImported, msgBilled, msgImported, attBytes, rawBytes, total] = await Promise.all([
    db
      .selectFrom('conversations')
      .select([month('created_at').as('month'), n.as('n')])
      .where('workspace_id', '=', workspaceId)
      .where('imported', '=', 0)
      .where('created_at', '>=', from)
      .where('created_at', '<', before)
      .groupBy(month('created_at'))
      .execute(),
    db
      .selectFrom('conversations')
      .select([month('imported_at').as('month'), n.as('n')])
      .where('workspace_id', '=', workspaceId)
      .where('imported', '=', 1)
      .where('imported_at', '>=', from)
      .where('imported_at', '<', before)
      .groupBy(month('imported_at'))
      .execute(),
    db
      .selectFrom('messages')
      .select([month('created_at').as('month'), n.as('n')])
      .where('workspace_id', '=', workspaceId)
      .where('kind', '!=', 'event')
      .where('imported_at', 'is', null)
      .where('created_at', '>=', from)
      .where('created_at', '<', before)
      .groupBy(month('created_at'))
      .execute(),
    db
      .selectFrom('messages')
      .select([month('imported_at').as('month'), n.as('n')])
      .where('workspace_id', '=', workspaceId)
      .where('kind', '!=', 'event')
      .where('imported_at', 'is not', null)
      .where('imported_at', '>=', from)
      .where('imported_at', '<', before)
      .groupBy(month('imported_at'))
      .execute(),
    db
      .selectFrom('attachments')
      .select([month('created_at').as('month'), sql<number>`coalesce(sum(size), 0)`.as('n')])
      .where('workspace_id', '=', workspaceId)
      .where('created_at', '>=', from)
      .where('created_at', '<', before)
      .groupBy(month('created_at'))
      .execute(),
    db
      .selectFrom('messages')
      .select([month('raw_stored_at').as('month'), sql<number>`coalesce(sum(raw_size), 0)`.as('n')])
      .where('workspace_id', '=', workspaceId)
      .where('raw_storage_key', 'is not', null)
      .where('raw_stored_at', '>=', from)
      .where('raw_stored_at', '<', before)
      .groupBy(month('raw_stored_at'))
      .execute(),
    storageBytes(db, workspaceId),
  ]);
  const months = new Map<string, MonthUsage>();
  const at = (m: string) => {
    let u = months.get(m);
    if (!u) months.set(m, (u = { conversationsBilled: 0, conversationsImported: 0, messagesBilled: 0, messagesImported: 0, bytesAdded: 0 }));
    return u;
  };
  for (const r of convBilled) at(r.month).conversationsBilled += Number(r.n);
  for (const r of convImported) at(r.month).conversationsImported += Number(r.n);
  for (const r of msgBilled) at(r.month).messagesBilled += Number(r.n);
  for (const r of msgImported) at(r.month).messagesImported += Number(r.n);
  for (const r of [...attBytes, ...rawBytes]) at(r.month).bytesAdded += Number(r.n);
  return { months, storageBytes: total };
}

/** Bytes stored now for the workspace: attachments and kept original e-mails. */
export async function storageBytes(db: Db, workspaceId: string): Promise<number> {
  const a = await db.selectFrom('attachments').select(sql<number>`coalesce(sum(size), 0)`.as('n')).where('workspace_id', '=', workspaceId).executeTakeFirst();
  const r = await db
    .selectFrom('messages')
    .select(sql<number>`coalesce(sum(raw_size), 0)`.as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('raw_storage_key', 'is not', null)
    .executeTakeFirst();
  return Number(a?.n ?? 0) + Number(r?.n ?? 0);
}
