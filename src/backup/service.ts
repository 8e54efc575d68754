// Backup and restore (spec: Backup and restore procedure). A backup is a directory with three
// files: the database (a consistent snapshot taken first: SQLite's online backup API, or pg_dump on
// Postgres), a tarball of the attachment storage made after it (so every file the snapshot refers to
// is in it; file deletion is held meanwhile), and manifest.json (version, schema migration, time,
// sizes, checksums). Never the master key. Restore checks everything before it replaces anything.
import { spawn } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import * as tar from 'tar';
import { z } from 'zod';
import { migrations } from '../../migrations/index.js';
import type { Config } from '../config.js';
import { type DbHandle, openDatabase } from '../db/connection.js';
import { systemClock } from '../platform/clock.js';
import { resolveMasterKey } from '../platform/crypto.js';
import { AppError, conflict, invalid } from '../platform/errors.js';
import { createLogger } from '../platform/log.js';
import { PRESENCE_KEY_SQL, type Presence, parsePresence, presenceIsLive, readPresences } from '../platform/presence.js';
import { readVersion } from '../version.js';
import { BACKUP_HOLD_KEY, holdFileDeletion } from './hold.js';

export const MANIFEST_FILE = 'manifest.json';
export const SQLITE_FILE = 'svc.db';
export const POSTGRES_FILE = 'database.sql';
export const FILES_ARCHIVE = 'files.tar';
export const BACKUP_FORMAT = 1;
/** Rows that describe the running processes, not the data: never restored (and the presence records, PRESENCE_KEY_SQL). */
const TRANSIENT_META = [BACKUP_HOLD_KEY];

const ManifestSchema = z.object({
  format: z.literal(BACKUP_FORMAT),
  svc_version: z.string(),
  created_at: z.string(),
  finished_at: z.string(),
  database: z.object({
    dialect: z.enum(['sqlite', 'postgres']),
    file: z.enum([SQLITE_FILE, POSTGRES_FILE]),
    bytes: z.number().int().nonnegative(),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    schema_migration: z.string(),
    migrations: z.array(z.string()),
  }),
  files: z.discriminatedUnion('included', [
    z.object({
      included: z.literal(true),
      storage: z.literal('local'),
      file: z.literal(FILES_ARCHIVE),
      bytes: z.number().int().nonnegative(),
      sha256: z.string().regex(/^[0-9a-f]{64}$/),
      count: z.number().int().nonnegative(),
    }),
    z.object({ included: z.literal(false), storage: z.literal('s3'), bucket: z.string().nullable(), prefix: z.string(), note: z.string() }),
  ]),
  master_key: z.object({ included: z.literal(false), fingerprint: z.string().nullable(), note: z.string() }),
});
export type Manifest = z.infer<typeof ManifestSchema>;

const S3_NOTE =
  'Attachments are in S3 storage and not in this backup: keep them with the bucket’s versioning or replication, or a bucket copy made after this backup.';
const KEY_NOTE = 'The master key is not in this backup: keep it apart and start the restored server with the same SVC_MASTER_KEY (or master.key).';

/** A short keyed fingerprint of the master key, to tell keys apart without revealing them. */
export function masterKeyFingerprint(key: Buffer): string {
  return createHmac('sha256', key).update('svc master key fingerprint').digest('hex').slice(0, 16);
}

function configuredKeyFingerprint(config: Config): string | null {
  try {
    return masterKeyFingerprint(resolveMasterKey(config, createLogger({ level: 'error', write: () => {} }), { create: false }));
  } catch {
    return null;
  }
}

async function sha256File(file: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 })) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { bytes, sha256: hash.digest('hex') };
}

function sqliteFile(config: Config): string {
  return path.join(config.dataDir, SQLITE_FILE);
}

/** pg tools take the password from the environment, never from their command line (ps shows that). */
function pgToolArgs(databaseUrl: string): { dbname: string; env: Record<string, string> } {
  const url = new URL(databaseUrl);
  const password = decodeURIComponent(url.password);
  url.password = '';
  return { dbname: url.toString(), env: password ? { PGPASSWORD: password } : {} };
}

function runTool(command: string, args: string[], opts: { env: Record<string, string>; stdin?: Readable }): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, ...opts.env }, stdio: [opts.stdin ? 'pipe' : 'ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
    child.on('error', (error) =>
      reject(
        new AppError(
          500,
          'tool_missing',
          `cannot run ${command}: ${(error as NodeJS.ErrnoException).code ?? error.message}; install the PostgreSQL client tools`,
        ),
      ),
    );
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new AppError(500, 'tool_failed', `${command} failed (exit ${code}): ${stderr.trim().split('\n').slice(-3).join(' ')}`)),
    );
    if (opts.stdin) {
      opts.stdin.on('error', (error) => child.kill() && reject(error));
      opts.stdin.pipe(child.stdin!);
      child.stdin!.on('error', () => {}); // the exit code tells what happened
    }
  });
}

async function appliedMigrations(handle: DbHandle): Promise<string[]> {
  try {
    const rows = await handle.db
      .selectFrom('schema_migrations' as never)
      .select('name' as never)
      .orderBy('name' as never)
      .execute();
    return (rows as { name: string }[]).map((r) => r.name);
  } catch {
    throw invalid('the database holds no svc schema (no migrations were applied)');
  }
}

function prepareOutDir(out: string): string {
  const dir = path.resolve(out);
  if (fs.existsSync(dir)) {
    if (!fs.statSync(dir).isDirectory()) throw invalid(`${dir} is not a directory`);
    if (fs.readdirSync(dir).length > 0) throw invalid(`${dir} is not empty; a backup goes into a new or empty directory`);
  } else {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  }
  return dir;
}

/** Copies every page in one step, so the copy is one consistent read (a writer in another process would restart a stepwise copy). */
const ALL_PAGES = 0x7fffffff;

async function snapshotSqlite(config: Config, target: string): Promise<void> {
  const source = new SQLite(sqliteFile(config), { fileMustExist: true });
  try {
    source.pragma('busy_timeout = 5000');
    await source.backup(target, { progress: () => ALL_PAGES });
  } finally {
    source.close();
  }
  // The copy is one self-contained file without the rows about the running processes.
  const copy = new SQLite(target);
  try {
    copy.prepare(`delete from server_meta where key in (${TRANSIENT_META.map(() => '?').join(', ')}) or ${PRESENCE_KEY_SQL}`).run(...TRANSIENT_META);
    copy.pragma('journal_mode = DELETE');
  } finally {
    copy.close();
  }
}

async function dumpPostgres(config: Config, target: string): Promise<void> {
  const { dbname, env } = pgToolArgs(config.databaseUrl!);
  // Plain SQL (restored with psql), one consistent snapshot; objects owned by whoever restores it.
  await runTool('pg_dump', ['--format=plain', '--no-owner', '--no-privileges', '--quote-all-identifiers', `--file=${target}`, `--dbname=${dbname}`], { env });
}

/** Streams the local storage into a tarball (never the spool directory .tmp); returns size, checksum and file count. */
async function archiveFiles(root: string, target: string): Promise<{ bytes: number; sha256: string; count: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  let count = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  const entries = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((name) => name !== '.tmp')
        .sort()
    : [];
  const source: Readable =
    entries.length === 0
      ? Readable.from([Buffer.alloc(1024)]) // an empty archive: the two zero blocks that end a tarball
      : Readable.from(
          tar.create(
            {
              cwd: root,
              portable: true,
              filter: (_p, stat) => {
                if ((stat as fs.Stats).isFile?.()) count++;
                return true;
              },
            },
            entries,
          ),
        );
  await pipeline(source, meter, fs.createWriteStream(target, { mode: 0o600 }));
  return { bytes, sha256: hash.digest('hex'), count };
}

export type BackupProgress = (line: string) => void;

/** Makes a backup of the running (or stopped) server's data into `out` (new or empty). */
export async function createBackup(config: Config, out: string, say: BackupProgress = () => {}): Promise<Manifest> {
  if (!config.databaseUrl && !fs.existsSync(sqliteFile(config))) throw invalid(`there is no database at ${sqliteFile(config)}`);
  const dir = prepareOutDir(out);
  const createdAt = new Date();
  const handle = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
  try {
    const applied = await appliedMigrations(handle);
    if (applied.length === 0) throw invalid('the database holds no svc schema (no migrations were applied)');
    const local = config.storage.kind === 'local';
    // Before the snapshot: from now on no stored file is deleted until the archive is written.
    const hold = local ? await holdFileDeletion({ db: handle.db, clock: systemClock }) : undefined;
    let database: Manifest['database'];
    let files: Manifest['files'];
    try {
      const dbFile = handle.dialect === 'sqlite' ? SQLITE_FILE : POSTGRES_FILE;
      const partial = path.join(dir, `${dbFile}.partial`);
      say(`database: ${handle.dialect === 'sqlite' ? 'online backup of the SQLite file' : 'pg_dump'}…`);
      if (handle.dialect === 'sqlite') await snapshotSqlite(config, partial);
      else await dumpPostgres(config, partial);
      fs.chmodSync(partial, 0o600);
      fs.renameSync(partial, path.join(dir, dbFile));
      database = {
        dialect: handle.dialect,
        file: dbFile,
        ...(await sha256File(path.join(dir, dbFile))),
        schema_migration: applied[applied.length - 1],
        migrations: applied,
      };
      say(`database: ${database.bytes} bytes, schema ${database.schema_migration}`);
      if (local) {
        say('files: archiving the attachment storage…');
        const archive = await archiveFiles(config.storage.localDir, path.join(dir, FILES_ARCHIVE));
        files = { included: true, storage: 'local', file: FILES_ARCHIVE, ...archive };
        say(`files: ${archive.count} file(s), ${archive.bytes} bytes`);
      } else {
        files = { included: false, storage: 's3', bucket: config.storage.s3.bucket ?? null, prefix: config.storage.s3.prefix, note: S3_NOTE };
        say(S3_NOTE);
      }
    } finally {
      await hold?.release();
    }
    const manifest: Manifest = {
      format: BACKUP_FORMAT,
      svc_version: readVersion(),
      created_at: createdAt.toISOString(),
      finished_at: new Date().toISOString(),
      database,
      files,
      master_key: { included: false, fingerprint: configuredKeyFingerprint(config), note: KEY_NOTE },
    };
    const tmp = path.join(dir, `${MANIFEST_FILE}.partial`);
    fs.writeFileSync(tmp, JSON.stringify(manifest, null, 2) + '\n', { mode: 0o600 });
    fs.renameSync(tmp, path.join(dir, MANIFEST_FILE));
    return manifest;
  } finally {
    await handle.close();
  }
}

export function readManifest(from: string): Manifest {
  const file = path.join(path.resolve(from), MANIFEST_FILE);
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    throw invalid(
      (error as NodeJS.ErrnoException).code === 'ENOENT'
        ? `${file} is missing: not a backup directory, or the backup did not finish`
        : `${file} is not readable JSON`,
    );
  }
  const parsed = ManifestSchema.safeParse(raw);
  if (!parsed.success) throw invalid(`${file} is not a manifest this version understands (${parsed.error.issues[0]?.path.join('.') || 'format'})`);
  return parsed.data;
}

async function verifyPart(dir: string, part: { file: string; bytes: number; sha256: string }): Promise<void> {
  const file = path.join(dir, part.file);
  if (!fs.existsSync(file)) throw invalid(`${file} is missing`);
  const actual = await sha256File(file);
  if (actual.bytes !== part.bytes || actual.sha256 !== part.sha256) {
    throw invalid(
      `${part.file} does not match the manifest (${actual.bytes} bytes, sha256 ${actual.sha256.slice(0, 12)}…; expected ${part.bytes} bytes, ${part.sha256.slice(0, 12)}…): the backup is damaged`,
    );
  }
}

/** The presence records of servers running on the data the restore would replace (none when nothing is there). */
async function runningServers(config: Config): Promise<Presence[]> {
  let records: Presence[] = [];
  if (!config.databaseUrl) {
    if (!fs.existsSync(sqliteFile(config))) return [];
    const db = new SQLite(sqliteFile(config), { fileMustExist: true });
    try {
      db.pragma('busy_timeout = 5000');
      const rows = db.prepare(`select value from server_meta where ${PRESENCE_KEY_SQL}`).all() as { value: string }[];
      records = rows.flatMap((r) => parsePresence(r.value) ?? []);
    } catch {
      records = []; // no svc schema there
    } finally {
      db.close();
    }
  } else {
    const handle = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
    try {
      records = (await readPresences(handle.db)).map((r) => r.presence);
    } catch {
      records = [];
    } finally {
      await handle.close();
    }
  }
  return records.filter((p) => presenceIsLive(p));
}

async function restoreSqlite(config: Config, source: string): Promise<void> {
  const target = sqliteFile(config);
  fs.mkdirSync(config.dataDir, { recursive: true });
  const tmp = `${target}.restoring`;
  await pipeline(fs.createReadStream(source), fs.createWriteStream(tmp, { mode: 0o600 }));
  const fd = fs.openSync(tmp, 'r+');
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  // The old write-ahead log must go first: SQLite would replay it into the new file.
  for (const suffix of ['-wal', '-shm', '-journal']) fs.rmSync(target + suffix, { force: true });
  fs.renameSync(tmp, target);
}

async function restorePostgres(config: Config, source: string): Promise<void> {
  const { dbname, env } = pgToolArgs(config.databaseUrl!);
  // One transaction: the database is emptied and refilled, or left as it was.
  const preamble = Readable.from(['DROP SCHEMA IF EXISTS public CASCADE;\nCREATE SCHEMA public;\n']);
  const input = Readable.from(
    (async function* () {
      for await (const chunk of preamble) yield chunk;
      for await (const chunk of fs.createReadStream(source, { highWaterMark: 1 << 20 })) yield chunk;
    })(),
  );
  await runTool('psql', ['--no-psqlrc', '--quiet', '--single-transaction', '--set=ON_ERROR_STOP=1', `--dbname=${dbname}`, '--file=-'], { env, stdin: input });
  const handle = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
  try {
    await handle.db
      .deleteFrom('server_meta')
      .where((eb) => eb.or([eb('key', 'in', TRANSIENT_META), sql<boolean>`${sql.raw(PRESENCE_KEY_SQL)}`]))
      .execute();
  } finally {
    await handle.close();
  }
}

/** Extracts the archive beside the storage directory, then swaps the two. */
async function restoreFiles(config: Config, archive: string, count: number): Promise<void> {
  const root = config.storage.localDir;
  const stamp = Date.now();
  const incoming = `${root}.restoring-${stamp}`;
  fs.mkdirSync(incoming, { recursive: true, mode: 0o700 });
  try {
    // An empty storage is archived as the bare end-of-archive blocks, which holds nothing to extract.
    if (count > 0)
      // strict: a damaged entry fails the restore; node-tar never writes outside cwd (no absolute or .. paths).
      await tar.extract({ file: archive, cwd: incoming, strict: true, preserveOwner: false });
  } catch (error) {
    fs.rmSync(incoming, { recursive: true, force: true });
    throw invalid(`the files archive cannot be extracted: ${(error as Error).message}`);
  }
  const old = `${root}.replaced-${stamp}`;
  if (fs.existsSync(root)) fs.renameSync(root, old);
  fs.renameSync(incoming, root);
  fs.rmSync(old, { recursive: true, force: true });
}

export interface RestoreResult {
  manifest: Manifest;
  /** Whether the configured master key is the one the backup was made with (null: unknown). */
  sameMasterKey: boolean | null;
}

/** Replaces the database and the files with a backup; refused while a server runs on this data. */
export async function restoreBackup(config: Config, from: string, say: BackupProgress = () => {}): Promise<RestoreResult> {
  const dir = path.resolve(from);
  const manifest = readManifest(dir);
  const dialect = config.databaseUrl ? 'postgres' : 'sqlite';
  if (manifest.database.dialect !== dialect) {
    throw invalid(
      `this backup holds a ${manifest.database.dialect} database and this server is configured for ${dialect}${dialect === 'postgres' ? ' (SVC_DATABASE_URL is set)' : ''}`,
    );
  }
  const unknown = manifest.database.migrations.filter((m) => !(m in migrations));
  if (unknown.length) {
    throw invalid(
      `this backup was made by a newer svc (${manifest.svc_version}; schema ${unknown.join(', ')} is unknown here); restore it with that version or newer`,
    );
  }
  if (manifest.files.included && config.storage.kind !== 'local') {
    throw invalid('this backup holds local attachment files but SVC_STORAGE is s3; restore it with SVC_STORAGE=local');
  }
  say('checking checksums…');
  await verifyPart(dir, manifest.database);
  if (manifest.files.included) await verifyPart(dir, manifest.files);

  const [presence] = await runningServers(config);
  if (presence) {
    throw conflict(
      `a server is running on this data (pid ${presence.pid} on ${presence.host}, last seen ${presence.seen_at}); stop it before restoring`,
      'server_running',
    );
  }

  say('replacing the database…');
  if (dialect === 'sqlite') await restoreSqlite(config, path.join(dir, manifest.database.file));
  else await restorePostgres(config, path.join(dir, manifest.database.file));
  if (manifest.files.included) {
    say('replacing the attachment files…');
    await restoreFiles(config, path.join(dir, manifest.files.file), manifest.files.count);
  }
  const current = configuredKeyFingerprint(config);
  const sameMasterKey = manifest.master_key.fingerprint && current ? manifest.master_key.fingerprint === current : null;
  return { manifest, sameMasterKey };
}
