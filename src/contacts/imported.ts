// Contacts as the mailbox migration sees them: which sender addresses are contacts already, and
// removing the contacts an import created once nothing refers to them any more.
import { type Expression, expressionBuilder, type SqlBool, sql } from 'kysely';
import type { Database, Db } from '../db/schema.js';

/** How many of these addresses (at most 500 per call) belong to a contact of the workspace. */
export async function countContactEmails(db: Db, workspaceId: string, emails: readonly string[]): Promise<number> {
  if (emails.length === 0) return 0;
  const found = await db
    .selectFrom('contact_emails')
    .select(sql<number>`count(*)`.as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('email', 'in', [...emails])
    .executeTakeFirst();
  return Number(found?.n ?? 0);
}

/** Those of these addresses that belong to a contact of the workspace. */
export async function knownContactEmails(db: Db, workspaceId: string, emails: readonly string[]): Promise<Set<string>> {
  if (emails.length === 0) return new Set();
  return new Set(
    (
      await db
        .selectFrom('contact_emails')
        .select('email')
        .where('workspace_id', '=', workspaceId)
        .where('email', 'in', [...emails])
        .execute()
    ).map((r) => r.email),
  );
}

/**
 * True when the contact (the column `contactIdColumn` names) is one of the workspace, has no
 * external id and no contact was merged into it.
 */
export function contactIsUnlinked(workspaceId: string, contactIdColumn: string): Expression<SqlBool> {
  const eb = expressionBuilder<Database, never>();
  const contactId = sql.ref<string>(contactIdColumn);
  return eb.and([
    eb.exists(eb.selectFrom('contacts').select(sql`1`.as('one')).where('contacts.id', '=', contactId).where('contacts.workspace_id', '=', workspaceId)),
    eb.not(eb.exists(eb.selectFrom('contact_external_ids').select(sql`1`.as('one')).where('contact_external_ids.contact_id', '=', contactId))),
    eb.not(eb.exists(eb.selectFrom('contacts as merged').select(sql`1`.as('one')).where('merged.merged_into_id', '=', contactId))),
  ]);
}

/** Deletes these contacts and their addresses (the caller checked nothing refers to them). */
export async function deleteUnlinkedContacts(db: Db, contactIds: readonly string[]): Promise<void> {
  if (contactIds.length === 0) return;
  await db
    .deleteFrom('contact_emails')
    .where('contact_id', 'in', [...contactIds])
    .execute();
  await db
    .deleteFrom('contacts')
    .where('id', 'in', [...contactIds])
    .execute();
}
