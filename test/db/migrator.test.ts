import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Kysely, type Migration, sql } from 'kysely';
import { openDatabase } from '../../src/db/connection.js';
import { checkResult, createMigrator } from '../../src/db/migrator.js';
import { testEnv } from '../helpers/server.js';

// A run of migrations is one transaction on both databases: one that fails (or a process killed
// during a long backfill) leaves nothing of the run behind, and the run can be made again. On
// SQLite kysely ran each statement on its own, and half a migration stayed applied.
test('a migration that fails leaves nothing of its run behind; the run is made again once it passes', async () => {
  const te = await testEnv();
  const handle = openDatabase({ databaseUrl: te.env.SVC_DATABASE_URL, dataDir: te.env.SVC_DATA_DIR });
  try {
    let failing = true;
    const runs: Record<string, Migration> = {
      '0001_first': { up: (db: Kysely<any>) => db.schema.createTable('first_table').addColumn('id', 'integer').execute() },
      '0002_second': {
        async up(db: Kysely<any>) {
          await db.schema.createTable('second_table').addColumn('id', 'integer').execute();
          await sql`insert into second_table (id) values (1)`.execute(db);
          await db.schema.alterTable('first_table').addColumn('note', 'text').execute();
          if (failing) throw new Error('cut short');
        },
      },
    };
    const migrate = async () => checkResult(await createMigrator(handle.db, { getMigrations: async () => runs }).migrateToLatest());
    const tables = async () =>
      (await handle.db.introspection.getTables())
        .map((t) => t.name)
        .filter((n) => n.endsWith('_table'))
        .sort();

    await assert.rejects(migrate(), /migration 0002_second failed: cut short/);
    assert.deepEqual(await tables(), [], 'neither migration left a table');
    const applied = await sql<{ name: string }>`select name from schema_migrations`.execute(handle.db);
    assert.deepEqual(applied.rows, [], 'none is recorded as applied');

    failing = false;
    assert.deepEqual(await migrate(), ['0001_first', '0002_second']);
    assert.deepEqual(await tables(), ['first_table', 'second_table']);
    const second = await sql<{ id: number }>`select id from second_table`.execute(handle.db);
    assert.deepEqual(
      second.rows.map((r) => Number(r.id)),
      [1],
    );
  } finally {
    await handle.close();
    await te.cleanup();
  }
});
