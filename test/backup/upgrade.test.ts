// The upgrade path: data written with the first schema version (only 0001_foundation applied) is
// backed up, restored with the current code, migrated forward on start, and reads back whole,
// sealed secrets included. Also: while a backup runs, stored files are not deleted.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { holdFileDeletion } from '../../src/backup/hold.js';
import { readManifest } from '../../src/backup/service.js';
import { loadConfig } from '../../src/config.js';
import { buildServices } from '../../src/context.js';
import { openDatabase } from '../../src/db/connection.js';
import { createMigrator } from '../../src/db/migrator.js';
import { ManualClock, MINUTE } from '../../src/platform/clock.js';
import { Sealer, sha256Hex } from '../../src/platform/crypto.js';
import { createLogger } from '../../src/platform/log.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { deliverWithFile, referencedKeys, storedKeys } from '../helpers/lifecycle.js';
import { INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { runSvc, spawnServer, startTestServer, type TestEnv, tempDir, testEnv } from '../helpers/server.js';

const envs: TestEnv[] = [];
const dirs: string[] = [];
after(async () => {
  for (const e of envs) await e.cleanup();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('upgrade path', () => {
  test('a backup of the first schema version restores with the current code and migrates forward on start', async () => {
    const old = await testEnv();
    envs.push(old);
    const config = loadConfig(old.env);
    const handle = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    const sealer = new Sealer(config.masterKey!);
    const apiKey = 'svc_sk_fixture0000000000000000000000000';
    const now = '2030-01-02T03:04:05.000Z';
    try {
      const result = await createMigrator(handle.db).migrateTo('0001_foundation');
      assert.equal(result.error, undefined);
      const db = handle.db as any;
      // Rows exactly as the first schema had them.
      await db
        .insertInto('workspaces')
        .values({ id: 'ws_fixture', name: 'Old Timer', origin: 'bootstrap', retention_days: 90, created_at: now, updated_at: now, deleted_at: null })
        .execute();
      await db
        .insertInto('people')
        .values({ id: 'per_fixture', email: 'owner@old.example', name: 'Olga', locale: 'en', created_at: now, updated_at: now })
        .execute();
      await db
        .insertInto('memberships')
        .values({ id: 'mem_fixture', workspace_id: 'ws_fixture', person_id: 'per_fixture', role: 'owner', created_at: now })
        .execute();
      await db
        .insertInto('api_keys')
        .values({
          id: 'key_fixture',
          workspace_id: 'ws_fixture',
          name: 'legacy',
          prefix: apiKey.slice(0, 15),
          secret_hash: sha256Hex(apiKey),
          scopes: JSON.stringify(['conversations:read', 'workspace:manage']),
          inbox_ids: null,
          created_at: now,
          last_used_at: null,
          expires_at: null,
          revoked_at: null,
        })
        .execute();
      await db
        .insertInto('inboxes')
        .values({
          id: 'inb_fixture',
          workspace_id: 'ws_fixture',
          name: 'Support',
          slug: 'support',
          locale: 'en',
          timezone: 'UTC',
          mode: 'async',
          expected_reply_minutes: 30,
          identity_secret_sealed: sealer.seal('identity-secret'),
          created_at: now,
          updated_at: now,
        })
        .execute();
      await db
        .insertInto('channels')
        .values({
          id: 'ch_fixture',
          workspace_id: 'ws_fixture',
          inbox_id: 'inb_fixture',
          kind: 'email',
          name: 'Mail',
          address: 'help@old.example',
          display_name: null,
          from_address: null,
          smtp_host: 'smtp.old.example',
          smtp_port: 587,
          smtp_tls: 'starttls',
          smtp_username: 'help',
          smtp_password_sealed: sealer.seal('old-smtp-password'),
          forwarding_address: null,
          public_key: null,
          origins: null,
          allow_anonymous: null,
          ask_email_offline: null,
          greeting: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
    } finally {
      await handle.close();
    }

    const dir = path.join(tempDir('svc-upgrade-'), 'backup');
    dirs.push(path.dirname(dir));
    const backup = await runSvc(['backup', '--out', dir], { env: old.env });
    assert.equal(backup.code, 0, backup.stderr);
    const manifest = readManifest(dir);
    assert.equal(manifest.database.schema_migration, '0001_foundation');
    assert.deepEqual(manifest.database.migrations, ['0001_foundation']);

    const current = await testEnv({ SVC_MASTER_KEY: old.env.SVC_MASTER_KEY });
    envs.push(current);
    const restore = await runSvc(['restore', '--from', dir], { env: current.env });
    assert.equal(restore.code, 0, restore.stderr);
    assert.match(restore.stderr, /schema 0001_foundation/);
    assert.match(restore.stderr, /migrated forward when the server starts/);

    const server = await spawnServer(current.env);
    try {
      const applied = server.stderrLines.filter((l) => l.includes('"msg":"migration applied"')).map((l) => JSON.parse(l).migration);
      assert.deepEqual(applied, Object.keys((await import('../../migrations/index.js')).migrations).slice(1), 'every later migration ran on start');
      const get = (p: string) =>
        fetch(server.url + p, { headers: { authorization: `Bearer ${apiKey}` } }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
      const ws = await get('/v1/workspace');
      assert.equal(ws.status, 200);
      assert.deepEqual([ws.body.id, ws.body.name, ws.body.retention_days], ['ws_fixture', 'Old Timer', 90]);
      const inboxes = await get('/v1/inboxes');
      assert.deepEqual(
        inboxes.body.data.map((i: { id: string; expected_reply_minutes: number }) => [i.id, i.expected_reply_minutes]),
        [['inb_fixture', 30]],
      );
      const channels = await get('/v1/channels?inbox_id=inb_fixture');
      assert.equal(channels.status, 200);
      assert.equal(channels.body.data[0].smtp.password_set, true);
    } finally {
      await server.kill('SIGTERM');
    }
    const app = buildServices(loadConfig(current.env), { log: createLogger({ level: 'error', write: () => {} }) });
    try {
      const ch = await app.db.selectFrom('channels').selectAll().where('id', '=', 'ch_fixture').executeTakeFirstOrThrow();
      assert.equal(app.sealer.open(ch.smtp_password_sealed!), 'old-smtp-password');
      const inbox = await app.db.selectFrom('inboxes').selectAll().where('id', '=', 'inb_fixture').executeTakeFirstOrThrow();
      assert.equal(app.sealer.open(inbox.identity_secret_sealed), 'identity-secret');
      const person = await app.db.selectFrom('people').selectAll().where('id', '=', 'per_fixture').executeTakeFirstOrThrow();
      assert.equal(person.email, 'owner@old.example');
    } finally {
      await app.close();
    }
  });
});

describe('file deletion during a backup', () => {
  test('stored files of deleted rows stay until the backup releases its hold', async () => {
    const clock = new ManualClock('2031-07-01T00:00:00Z');
    const s = await startTestServer({ clock, env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    try {
      await s.app.jobs.stop();
      const ws = await seedWorkspace(s.app);
      const address = (await seedEmailChannel(s.app, ws)).address!;
      const { conversation_id } = await deliverWithFile(s, address);
      const keys = await referencedKeys(s.app.db, ws.workspaceId);
      const contact = await s.app.db.selectFrom('conversations').select('contact_id').where('id', '=', conversation_id).executeTakeFirstOrThrow();
      const hold = await holdFileDeletion(s.app);
      assert.equal((await s.request('DELETE', `/v1/contacts/${contact.contact_id}`, { token: ws.apiKey })).status, 200);
      await s.app.jobs.drain();
      const onDisk = storedKeys(s.env.SVC_DATA_DIR);
      for (const k of keys) assert.ok(onDisk.has(k), `${k} is kept while the backup holds deletion`);
      await hold.release();
      clock.advance(MINUTE);
      await s.app.jobs.drain();
      const after = storedKeys(s.env.SVC_DATA_DIR);
      for (const k of keys) assert.ok(!after.has(k), `${k} is deleted after the backup`);
    } finally {
      await s.stop();
    }
  });
});
