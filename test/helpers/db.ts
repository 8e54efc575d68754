// A fresh database per test server: a temp SQLite file, or a new Postgres database when
// SVC_TEST_DATABASE_URL points at a server (CI sets it).
import pg from 'pg';
import { randomText } from '../../src/platform/ids.js';

export const postgresUrl = process.env.SVC_TEST_DATABASE_URL;

/** A fresh database on the Postgres server of `adminUrl` (default SVC_TEST_DATABASE_URL); none for SQLite. */
export async function createTestDatabase(adminUrl: string | undefined = postgresUrl): Promise<{ url?: string; drop(): Promise<void> }> {
  if (!adminUrl) return { drop: async () => {} };
  const name = `svc_test_${randomText(12)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}
