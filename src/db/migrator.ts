import { type Kysely, type Migration, type MigrationInfo, type MigrationProvider, type MigrationResultSet, Migrator } from 'kysely';
import { migrations } from '../../migrations/index.js';

const svcMigrations: MigrationProvider = { getMigrations: async () => migrations as Record<string, Migration> };

/** The migrator of svc's migrations (another `provider` for tests). A run is one transaction on both dialects (sqlite-dialect.ts). */
export function createMigrator(db: Kysely<any>, provider: MigrationProvider = svcMigrations): Migrator {
  return new Migrator({
    db,
    provider,
    migrationTableName: 'schema_migrations',
    migrationLockTableName: 'schema_migrations_lock',
  });
}

export async function pendingMigrations(db: Kysely<any>): Promise<string[]> {
  const all = await createMigrator(db).getMigrations();
  return all.filter((m) => !m.executedAt).map((m) => m.name);
}

export async function migrationStatus(db: Kysely<any>): Promise<readonly MigrationInfo[]> {
  return createMigrator(db).getMigrations();
}

/** Throws with the failing migration's name and cause; returns the names applied. */
export function checkResult({ error, results }: MigrationResultSet): string[] {
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    const cause = error instanceof Error ? error.message : String(error);
    throw new Error(failed ? `migration ${failed.migrationName} failed: ${cause}` : `migrations failed: ${cause}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
