import type { Kysely } from 'kysely';

// Formatted saved replies and signatures (issue 34): the sanitized html the editor made, beside the
// plain text made from it (`body`, kept for search, plain mail parts and API callers). Null: plain.
const TABLES = ['saved_replies', 'member_signatures', 'inbox_signatures'] as const;

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) await db.schema.alterTable(table).addColumn('html', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) await db.schema.alterTable(table).dropColumn('html').execute();
}
