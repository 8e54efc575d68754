// What a help-desk migration keeps of its source (tables migration_helpdesk_sources and
// migration_helpdesk_entries): the account, the export cursor, the agents seen, the entries read.
// The scan, the copy and the team addresses read it through these functions.
import type { Db } from '../../../db/schema.js';
import type { MigrationRow } from '../../store.js';
import type { HelpDeskEntry } from './entry.js';

export const HELP_DESK_PROVIDERS = new Set(['zendesk', 'help_scout']);
/** The one folder of a help desk: every ticket (conversation) it holds. */
export const TICKETS_FOLDER = 'Tickets';

export function isHelpDesk(m: Pick<MigrationRow, 'provider'>): boolean {
  return HELP_DESK_PROVIDERS.has(m.provider);
}

export async function helpDeskAccount(db: Db, migrationId: string) {
  return db.selectFrom('migration_helpdesk_sources').selectAll().where('migration_id', '=', migrationId).executeTakeFirst();
}

/** New credentials: a different account (or app) starts the reading over; the same one keeps its cursor. */
export async function saveHelpDeskAccount(tx: { db: Db }, m: MigrationRow, account: string | null, username: string): Promise<void> {
  const current = await helpDeskAccount(tx.db, m.id);
  if (current && current.account === account && m.username === username) return;
  await tx.db.deleteFrom('migration_helpdesk_entries').where('migration_id', '=', m.id).execute();
  await tx.db.deleteFrom('migration_helpdesk_sources').where('migration_id', '=', m.id).execute();
  await tx.db
    .insertInto('migration_helpdesk_sources')
    .values({ migration_id: m.id, account, cursor: null, pull_done: 0, next_uid: 1, agents: '[]', pulled_at: null })
    .execute();
}

/** The agents' addresses seen in the help desk (team addresses of the migration). */
export async function helpDeskAgents(db: Db, migrationId: string): Promise<string[]> {
  const row = await helpDeskAccount(db, migrationId);
  return row ? (JSON.parse(row.agents) as string[]) : [];
}

/** Notes and tags of entries by UID (what the copy needs beyond the rendered message). */
export async function helpDeskEntryMeta(
  db: Db,
  migrationId: string,
  uids: number[],
): Promise<Map<number, { note: boolean; tags: string[]; status: string | null }>> {
  const out = new Map<number, { note: boolean; tags: string[]; status: string | null }>();
  for (let i = 0; i < uids.length; i += 500) {
    const rows = await db
      .selectFrom('migration_helpdesk_entries')
      .select(['uid', 'data'])
      .where('migration_id', '=', migrationId)
      .where('uid', 'in', uids.slice(i, i + 500))
      .execute();
    for (const r of rows) {
      const e = JSON.parse(r.data) as HelpDeskEntry;
      out.set(Number(r.uid), { note: e.note, tags: e.tags, status: e.status });
    }
  }
  return out;
}

export const HELP_DESK_SKIP_REASONS: Record<string, string> = {
  deleted: 'tickets deleted in the help desk (status deleted) are not copied',
  spam: 'conversations marked as spam in the help desk are not copied',
};

export interface HelpDeskSkipped {
  [reason: string]: number;
}

/** Tickets the help desk holds that are not copied (deleted, spam), from the activity log's lines. */
export async function helpDeskSkipped(db: Db, migrationId: string): Promise<HelpDeskSkipped> {
  const rows = await db
    .selectFrom('mailbox_migration_log')
    .select('detail')
    .where('migration_id', '=', migrationId)
    .where('action', '=', 'source_skipped')
    .execute();
  const out: HelpDeskSkipped = {};
  for (const r of rows) for (const [k, v] of Object.entries(JSON.parse(r.detail ?? '{}') as Record<string, number>)) out[k] = (out[k] ?? 0) + v;
  return out;
}
