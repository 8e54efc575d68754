// What a help-desk migration keeps of its source (tables migration_helpdesk_sources and
// migration_helpdesk_entries): the account, the export cursor, the agents seen, the entries read.
// The scan, the copy and the team addresses read it through these functions.
import { MAX_LABEL_LENGTH } from '../../../conversations/service.js';
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

/** The entry's tags that can be labels as they are (others are left out rather than fail the batch). */
export function tagLabels(tags: readonly string[]): string[] {
  return tags.map((t) => t.trim()).filter((t) => t.length > 0 && t.length <= MAX_LABEL_LENGTH && !/[\u0000-\u001f\u007f]/.test(t));
}

export interface HelpDeskEntryMeta {
  note: boolean;
  tags: string[];
  status: string | null;
  /** The provider's ids of the customers the entry names (its author when a customer wrote it, the requester), by e-mail address. */
  customerIds: { email: string; externalId: string }[];
}

/** The contact attribute that keeps the provider's id of a customer. */
export function helpDeskCustomerAttribute(m: Pick<MigrationRow, 'provider'>): string {
  return m.provider === 'zendesk' ? 'zendesk_user_id' : 'help_scout_customer_id';
}

/** Notes, tags and customer ids of entries by UID (what the copy needs beyond the rendered message). */
export async function helpDeskEntryMeta(db: Db, migrationId: string, uids: number[]): Promise<Map<number, HelpDeskEntryMeta>> {
  const out = new Map<number, HelpDeskEntryMeta>();
  for (let i = 0; i < uids.length; i += 500) {
    const rows = await db
      .selectFrom('migration_helpdesk_entries')
      .select(['uid', 'data'])
      .where('migration_id', '=', migrationId)
      .where('uid', 'in', uids.slice(i, i + 500))
      .execute();
    for (const r of rows) {
      const e = JSON.parse(r.data) as HelpDeskEntry;
      const customers = [e.author.role === 'customer' ? e.author : null, e.requester];
      const customerIds = customers.flatMap((p) => (p?.email && p.externalId ? [{ email: p.email, externalId: p.externalId }] : []));
      out.set(Number(r.uid), { note: e.note, tags: e.tags, status: e.status, customerIds });
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
