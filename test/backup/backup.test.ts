// svc backup / svc restore against a running server: a backup taken under concurrent writes and
// deletions restores to a consistent state where every referenced file exists; sealed secrets (SMTP
// password, webhook secret) still work with the same master key; restore refuses a running server,
// a damaged backup and a dialect it was not made for; a wrong master key is caught at start.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { readManifest } from '../../src/backup/service.js';
import { loadConfig } from '../../src/config.js';
import { type App, buildServices } from '../../src/context.js';
import { createLogger } from '../../src/platform/log.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverWithFile, referencedKeys, storedKeys, waitUntil } from '../helpers/lifecycle.js';
import { INGRESS_SECRET, SINK_LOGIN, seedEmailChannel, startS3 } from '../helpers/mail.js';
import { type ChildServer, runSvc, spawnServer, type TestEnv, tempDir, testEnv } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';
import { type Receiver, startReceiver, verifyDelivery } from '../helpers/webhooks.js';

function client(url: string) {
  return {
    async request(method: string, urlPath: string, opts: { token?: string; body?: unknown; raw?: Buffer } = {}) {
      const headers: Record<string, string> = {};
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      let body: string | Buffer | undefined = opts.raw;
      if (opts.body !== undefined) {
        body = JSON.stringify(opts.body);
        headers['content-type'] = 'application/json';
      }
      const res = await fetch(url + urlPath, { method, headers, body: body as BodyInit | undefined });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    },
  };
}

const quiet = () => createLogger({ level: 'error', write: () => {} });

describe('backup and restore', () => {
  let source: TestEnv;
  let server: ChildServer | undefined;
  const children: ChildServer[] = [];
  const spawn = async (env: Record<string, string>) => {
    const child = await spawnServer(env);
    children.push(child);
    return child;
  };
  let app: App;
  let seed: Seed;
  let sink: SmtpSink;
  let rx: Receiver;
  let webhookSecret: string;
  let channelAddress: string;
  const envs: TestEnv[] = [];
  const dirs: string[] = [];
  let backupDir: string;

  before(async () => {
    sink = await startSmtpSink(SINK_LOGIN);
    rx = await startReceiver();
    source = await testEnv({ SVC_INGRESS_SECRET: INGRESS_SECRET, SVC_WEBHOOK_ALLOW_PRIVATE: '1' });
    server = await spawn(source.env);
    app = buildServices(loadConfig(source.env), { log: quiet() });
    seed = await seedWorkspace(app, { name: 'Backed Up' });
    channelAddress = (await seedEmailChannel(app, seed, { smtpPort: sink.port })).address!;
    const hook = await client(server.url).request('POST', '/v1/webhooks', {
      token: seed.apiKey,
      body: { url: `${rx.url}/restored`, events: ['message.created'] },
    });
    assert.equal(hook.status, 201);
    webhookSecret = hook.body.secret;
  });
  after(async () => {
    for (const c of children) if (c.child.exitCode === null) await c.kill('SIGKILL');
    await app.close();
    await sink.close();
    await rx.close();
    for (const e of [source, ...envs]) await e.cleanup();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  const newDir = () => {
    const d = tempDir('svc-backup-');
    dirs.push(d);
    return path.join(d, 'out');
  };
  const restoredEnv = async (extra: Record<string, string> = {}) => {
    const e = await testEnv({ SVC_INGRESS_SECRET: INGRESS_SECRET, SVC_WEBHOOK_ALLOW_PRIVATE: '1', SVC_MASTER_KEY: source.env.SVC_MASTER_KEY, ...extra });
    envs.push(e);
    return e;
  };

  test('a backup taken under concurrent writes and deletions restores consistently; secrets still work', async () => {
    const api = client(server!.url);
    const early: string[] = [];
    for (let i = 0; i < 30; i++) early.push((await deliverWithFile(api, channelAddress, { from: `early${i}@example.com` })).conversation_id);
    const contacts = (await app.db.selectFrom('conversations').select('contact_id').where('id', 'in', early).execute()).map((r) => r.contact_id);

    // Writers and deleters keep going while the backup runs.
    let running = true;
    let written = 0;
    let deleted = 0;
    const writer = (async () => {
      while (running) {
        await deliverWithFile(api, channelAddress);
        written++;
      }
    })();
    const deleter = (async () => {
      while (running && contacts.length) {
        const id = contacts.shift()!;
        const r = await api.request('DELETE', `/v1/contacts/${id}`, { token: seed.apiKey });
        assert.equal(r.status, 200);
        deleted++;
        await new Promise((res) => setTimeout(res, 20));
      }
    })();
    backupDir = newDir();
    const backup = await runSvc(['backup', '--out', backupDir], { env: source.env, timeoutMs: 60_000 });
    running = false;
    await writer;
    await deleter;
    assert.equal(backup.code, 0, backup.stderr);
    assert.equal(backup.stdout, '');
    assert.ok(written > 0 && deleted > 0, `writes (${written}) and deletions (${deleted}) ran alongside`);
    assert.match(backup.stderr, /master key is not included/);
    const manifest = readManifest(backupDir);
    assert.equal(manifest.database.schema_migration, Object.keys((await import('../../migrations/index.js')).migrations).at(-1));
    assert.equal(manifest.files.included, true);
    assert.equal(manifest.master_key.included, false);
    const listed = fs.readdirSync(backupDir).sort();
    assert.deepEqual(listed, ['files.tar', 'manifest.json', manifest.database.file].sort());
    const key = Buffer.from(source.env.SVC_MASTER_KEY, 'base64');
    for (const f of listed) assert.ok(!fs.readFileSync(path.join(backupDir, f)).includes(key.toString('base64')), `${f} holds no master key`);
    assert.equal((await app.db.selectFrom('server_meta').select('key').where('key', '=', 'backup_in_progress').execute()).length, 0, 'the hold is released');

    // Restore into a fresh data dir and database with the same key.
    const target = await restoredEnv();
    const restored = await runSvc(['restore', '--from', backupDir], { env: target.env, timeoutMs: 60_000 });
    assert.equal(restored.code, 0, restored.stderr);
    assert.match(restored.stderr, /same master key/);
    assert.doesNotMatch(restored.stderr, /NOT the one/);
    const copy = buildServices(loadConfig(target.env), { log: quiet() });
    try {
      const keys = await referencedKeys(copy.db);
      const onDisk = storedKeys(target.dataDir);
      assert.ok(keys.length >= 2 * (30 - deleted), `${keys.length} files referenced`);
      for (const k of keys) assert.ok(onDisk.has(k), `the restored snapshot refers to ${k}, which the archive holds`);
      const transient = await copy.db
        .selectFrom('server_meta')
        .select('key')
        .where((eb) => eb.or([eb('key', 'in', ['backup_in_progress', 'server_running']), eb('key', 'like', 'server_running:%')]))
        .execute();
      assert.deepEqual(transient, []);
      // Every conversation has its first message (a consistent snapshot, not a torn one).
      const orphans = await copy.db
        .selectFrom('conversations as c')
        .select('c.id')
        .where((eb) => eb.not(eb.exists(eb.selectFrom('messages as m').select('m.id').whereRef('m.conversation_id', '=', 'c.id'))))
        .execute();
      assert.deepEqual(orphans, []);
    } finally {
      await copy.close();
    }

    // The original server stops; the restored one starts and its sealed secrets open.
    await server!.kill('SIGTERM');
    server = await spawn(target.env);
    const api2 = client(server.url);
    const list = await api2.request('GET', '/v1/conversations?limit=200', { token: seed.apiKey });
    assert.equal(list.status, 200);
    assert.ok(list.body.data.length > 0);
    const before = rx.received.length;
    const fresh = await deliverWithFile(api2, channelAddress, { from: 'after-restore@example.com' });
    // Deliveries the snapshot held as pending may come first; wait for the new message's.
    const ofFresh = () => rx.received.find((r, i) => i >= before && r.body.includes(fresh.conversation_id));
    await waitUntil(() => ofFresh() !== undefined, 30_000, 'the webhook of the new message');
    const delivery = ofFresh()!;
    verifyDelivery(delivery, webhookSecret, { now: () => new Date() });
    const sent = await api2.request('POST', `/v1/conversations/${fresh.conversation_id}/messages`, {
      token: seed.apiKey,
      body: { body: 'Answer after the restore' },
    });
    assert.equal(sent.status, 201);
    const mails = await sink.waitFor(1, 20_000);
    assert.match(mails.at(-1)!.parsed.text ?? '', /Answer after the restore/, 'the SMTP password opened and logged in');
    await server.kill('SIGTERM');
    server = undefined;
  });

  test('restore is refused while a server runs on the data; nothing changes', async () => {
    const target = await restoredEnv();
    assert.equal((await runSvc(['restore', '--from', backupDir], { env: target.env })).code, 0);
    server = await spawn(target.env);
    const marker = await client(server.url).request('POST', '/v1/inboxes', { token: seed.apiKey, body: { name: 'After restore' } });
    assert.equal(marker.status, 201);
    const refused = await runSvc(['restore', '--from', backupDir], { env: target.env });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /a server is running on this data \(pid \d+/);
    assert.equal(
      refused.stderr
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('error:')).length,
      1,
    );
    const still = await client(server.url).request('GET', '/v1/inboxes', { token: seed.apiKey });
    assert.ok(
      still.body.data.some((i: { id: string }) => i.id === marker.body.id),
      'the data was not replaced',
    );
    await server.kill('SIGTERM');
    server = undefined;
    // Stopped: the restore goes ahead (the marker inbox is gone again).
    assert.equal((await runSvc(['restore', '--from', backupDir], { env: target.env })).code, 0);
  });

  test('damaged, unfinished or mismatched backups are refused before anything is replaced', async () => {
    const target = await restoredEnv();
    const damaged = newDir();
    fs.cpSync(backupDir, damaged, { recursive: true });
    const tarFile = path.join(damaged, 'files.tar');
    const bytes = fs.readFileSync(tarFile);
    bytes[700] ^= 0xff;
    fs.writeFileSync(tarFile, bytes);
    const r1 = await runSvc(['restore', '--from', damaged], { env: target.env });
    assert.equal(r1.code, 1);
    assert.match(r1.stderr, /files\.tar does not match the manifest/);
    assert.ok(!fs.existsSync(path.join(target.dataDir, 'svc.db')), 'nothing was written');

    fs.rmSync(path.join(damaged, 'manifest.json'));
    const r2 = await runSvc(['restore', '--from', damaged], { env: target.env });
    assert.equal(r2.code, 1);
    assert.match(r2.stderr, /manifest\.json is missing/);

    const other = target.env.SVC_DATABASE_URL ? { SVC_DATABASE_URL: '' } : { SVC_DATABASE_URL: 'postgres://svc:svc@127.0.0.1:1/none' };
    const r3 = await runSvc(['restore', '--from', backupDir], { env: { ...target.env, ...other } });
    assert.equal(r3.code, 1);
    assert.match(r3.stderr, /holds a (sqlite|postgres) database and this server is configured for/);

    // A backup made by a newer version (a schema this code does not know).
    const newer = newDir();
    fs.cpSync(backupDir, newer, { recursive: true });
    const m = JSON.parse(fs.readFileSync(path.join(newer, 'manifest.json'), 'utf8'));
    m.database.migrations.push('9999_future');
    fs.writeFileSync(path.join(newer, 'manifest.json'), JSON.stringify(m));
    const r4 = await runSvc(['restore', '--from', newer], { env: target.env });
    assert.equal(r4.code, 1);
    assert.match(r4.stderr, /made by a newer svc/);

    const notEmpty = await runSvc(['backup', '--out', backupDir], { env: source.env });
    assert.equal(notEmpty.code, 1);
    assert.match(notEmpty.stderr, /is not empty/);
  });

  test('with another master key the restore warns and the server refuses to start with a clear message', async () => {
    const target = await restoredEnv({ SVC_MASTER_KEY: randomBytes(32).toString('base64') });
    const r = await runSvc(['restore', '--from', backupDir], { env: target.env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /NOT the one this backup was made with/);
    await assert.rejects(spawnServer(target.env), (error: Error) => {
      assert.match(error.message, /the master key does not match the one this data was written with/);
      return true;
    });
  });

  test('with s3 storage the manifest points to bucket versioning and no archive is made', async () => {
    const s3 = await startS3();
    try {
      const e = await testEnv({
        SVC_STORAGE: 's3',
        SVC_S3_BUCKET: s3.bucket,
        SVC_S3_ENDPOINT: s3.endpoint,
        SVC_S3_FORCE_PATH_STYLE: '1',
        SVC_S3_ACCESS_KEY_ID: 'S3RVER',
        SVC_S3_SECRET_ACCESS_KEY: 'S3RVER',
      });
      envs.push(e);
      assert.equal((await runSvc(['migrate', 'up'], { env: e.env })).code, 0);
      const out = newDir();
      const r = await runSvc(['backup', '--out', out], { env: e.env });
      assert.equal(r.code, 0, r.stderr);
      const m = readManifest(out);
      assert.equal(m.files.included, false);
      assert.match((m.files as { note: string }).note, /versioning or replication/);
      assert.ok(!fs.existsSync(path.join(out, 'files.tar')));
    } finally {
      await s3.close();
    }
  });
});
