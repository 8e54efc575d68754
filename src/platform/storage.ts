// Attachment storage behind one interface: `local` files under $SVC_DATA_DIR/files, or `s3`.
// Keys are made by the program (never from user input) and checked before use.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../config.js';
import { type DurableFs, directoriesUpTo, nodeDurableFs, SharedFlush } from './durable.js';
import { randomText } from './ids.js';

export interface StoredFile {
  size: number;
  sha256: string;
}

export interface Storage {
  readonly kind: 'local' | 's3';
  /**
   * Stores the data under key; `maxBytes` aborts (and stores nothing) when the data is larger.
   * Once it resolves the file is durable (flushed to disk, or an S3 PUT that succeeded), so a
   * database row committed after it never refers to a file lost on power failure.
   */
  put(key: string, data: Buffer | Readable, opts?: { maxBytes?: number; contentType?: string }): Promise<StoredFile>;
  /**
   * Stores a new key's data like `put`, but leaves the flush to `flushWritten`: a group commit
   * (src/db/batch.ts) flushes the files of all its works, and each of their directories once,
   * before its commit. Until then the file may be lost on power failure (never referred to yet).
   */
  write(key: string, data: Buffer): Promise<WrittenFile>;
  /** Makes files from `write` durable (each file once, however often it is asked). */
  flushWritten(files: readonly WrittenFile[]): Promise<void>;
  get(key: string): Promise<Readable>;
  /** Idempotent: deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  exists(key: string): Promise<boolean>;
}

export interface WrittenFile extends StoredFile {
  readonly key: string;
}

export class FileTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`file is larger than ${maxBytes} bytes`);
  }
}

const KEY_PATTERN = /^[a-z0-9_-]+(\/[A-Za-z0-9_.-]+)*$/;

function checkKey(key: string): string {
  if (!KEY_PATTERN.test(key) || key.split('/').some((p) => p === '.' || p === '..')) {
    throw new Error(`invalid storage key ${JSON.stringify(key)}`);
  }
  return key;
}

/** Streams data into a temporary file, measuring and hashing it on the way. */
async function spool(data: Buffer | Readable, tmpDir: string, maxBytes?: number): Promise<StoredFile & { tmp: string }> {
  fs.mkdirSync(tmpDir, { recursive: true });
  const tmp = path.join(tmpDir, `${Date.now()}-${randomText(10)}.part`);
  const hash = createHash('sha256');
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (maxBytes !== undefined && size > maxBytes) return done(new FileTooLargeError(maxBytes));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  await pipeToNewFile(Buffer.isBuffer(data) ? Readable.from([data]) : data, meter, tmp);
  return { tmp, size, sha256: hash.digest('hex') };
}

/**
 * Streams `source` through `meter` into a new private file; when that fails, nothing of the file is
 * left. The file is opened asynchronously, so a source that fails early (a client cutting its
 * upload) can end the pipeline before the open has created the file: it is removed only once the
 * file's stream has closed.
 */
export async function pipeToNewFile(source: Readable, meter: Transform, file: string): Promise<void> {
  const out = fs.createWriteStream(file, { mode: 0o600 });
  try {
    await pipeline(source, meter, out);
  } catch (error) {
    if (!out.closed) await new Promise<void>((closed) => out.once('close', () => closed()));
    fs.rmSync(file, { force: true });
    throw error;
  }
}

export class LocalStorage implements Storage {
  readonly kind = 'local' as const;
  /** Directories this process made sure of (they exist and their entries in the parents are flushed). */
  private readonly knownDirs = new Set<string>();
  private readonly dirFlush: SharedFlush;
  private readonly root: string;
  constructor(
    root: string,
    private readonly durable: DurableFs = nodeDurableFs,
  ) {
    this.root = path.resolve(root);
    this.dirFlush = new SharedFlush((dir) => this.durable.syncDir(dir));
  }

  private file(key: string) {
    return path.join(this.root, checkKey(key));
  }

  /** Makes the directory and flushes every parent's entry up to the storage root's, once per process. */
  private async ensureDir(dir: string) {
    if (this.knownDirs.has(dir)) return;
    fs.mkdirSync(dir, { recursive: true });
    for (const d of directoriesUpTo(dir, this.root)) await this.dirFlush.sync(path.dirname(d));
    if (this.knownDirs.size > 10_000) this.knownDirs.clear();
    this.knownDirs.add(dir);
  }

  async put(key: string, data: Buffer | Readable, opts: { maxBytes?: number } = {}): Promise<StoredFile> {
    const target = this.file(key);
    const dir = path.dirname(target);
    await this.ensureDir(dir);
    if (Buffer.isBuffer(data)) {
      if (opts.maxBytes !== undefined && data.length > opts.maxBytes) throw new FileTooLargeError(opts.maxBytes);
      const stored = { size: data.length, sha256: createHash('sha256').update(data).digest('hex') };
      // A new key is written in place (nothing refers to it before put returns); an existing key
      // is replaced through a temporary file, so it is never half-written.
      try {
        await this.durable.createFile(target, data, 0o600, () => this.dirFlush.sync(dir));
        return stored;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
          await fs.promises.rm(target, { force: true });
          throw error;
        }
      }
    }
    const { tmp, size, sha256 } = await spool(data, path.join(this.root, '.tmp'), opts.maxBytes);
    try {
      await this.durable.syncFile(tmp);
      fs.renameSync(tmp, target);
    } catch (error) {
      fs.rmSync(tmp, { force: true });
      throw error;
    }
    await this.dirFlush.sync(dir);
    return { size, sha256 };
  }

  /** Descriptors of files written by `write` and not flushed yet, by path. */
  private readonly unflushed = new Map<string, number>();
  /** Flushes of such files still running, or failed (until the file is deleted). */
  private readonly fileFlushes = new Map<string, Promise<void>>();

  async write(key: string, data: Buffer): Promise<WrittenFile> {
    const target = this.file(key);
    await this.ensureDir(path.dirname(target));
    const sha256 = createHash('sha256').update(data).digest('hex');
    try {
      this.unflushed.set(target, await this.durable.createUnflushed(target, data, 0o600));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // A key that exists is replaced the careful way, flushed at once.
      return { key, ...(await this.put(key, data)) };
    }
    return { key, size: data.length, sha256 };
  }

  async flushWritten(files: readonly WrittenFile[]): Promise<void> {
    const dirs = new Set<string>();
    const flushes: Promise<void>[] = [];
    for (const { key } of files) {
      const target = this.file(key);
      dirs.add(path.dirname(target));
      const fd = this.unflushed.get(target);
      if (fd !== undefined) {
        this.unflushed.delete(target);
        const flush = this.durable.flushCreated(target, fd);
        this.fileFlushes.set(target, flush);
        // Done: forgotten (durable). Failed: kept, so asking again fails too until the file is deleted.
        flush.then(
          () => this.fileFlushes.get(target) === flush && this.fileFlushes.delete(target),
          () => {},
        );
      }
      // Asked again while it runs (a batch run again work by work): wait for the same flush.
      const running = this.fileFlushes.get(target);
      if (running) flushes.push(running);
    }
    // Every file was created before this call, so one flush of each directory started now covers them all.
    for (const dir of dirs) flushes.push(this.durable.syncDir(dir));
    const outcomes = await Promise.allSettled(flushes);
    const failed = outcomes.find((o) => o.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
  }

  async get(key: string): Promise<Readable> {
    const file = this.file(key);
    await fs.promises.access(file);
    return fs.createReadStream(file);
  }

  async delete(key: string): Promise<void> {
    const file = this.file(key);
    this.fileFlushes.delete(file);
    const fd = this.unflushed.get(file);
    if (fd !== undefined) {
      this.unflushed.delete(file);
      fs.close(fd, () => {});
    }
    await fs.promises.rm(file, { force: true });
  }

  async exists(key: string): Promise<boolean> {
    return fs.existsSync(this.file(key));
  }
}

export class S3Storage implements Storage {
  readonly kind = 's3' as const;
  private sdk?: Promise<{ client: S3Client; s3: typeof import('@aws-sdk/client-s3') }>;
  constructor(
    private readonly opts: Config['storage']['s3'] & { bucket: string },
    private readonly tmpDir: string,
  ) {}

  /** The SDK is loaded on first use: it costs startup time that local-storage servers need not pay. */
  private load() {
    this.sdk ??= import('@aws-sdk/client-s3').then((s3) => ({
      s3,
      client: new s3.S3Client({
        region: this.opts.region,
        endpoint: this.opts.endpoint,
        forcePathStyle: this.opts.forcePathStyle,
        // Checksums only where S3 requires them: the SDK's default (aws-chunked uploads with
        // trailing checksums) is not understood by many S3-compatible servers, which then store
        // the chunk framing in the object.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
        credentials:
          this.opts.accessKeyId && this.opts.secretAccessKey ? { accessKeyId: this.opts.accessKeyId, secretAccessKey: this.opts.secretAccessKey } : undefined,
      }),
    }));
    return this.sdk;
  }

  private objectKey(key: string) {
    return this.opts.prefix + checkKey(key);
  }

  async put(key: string, data: Buffer | Readable, opts: { maxBytes?: number; contentType?: string } = {}): Promise<StoredFile> {
    const { client, s3 } = await this.load();
    const { tmp, size, sha256 } = await spool(data, this.tmpDir, opts.maxBytes);
    try {
      await client.send(
        new s3.PutObjectCommand({
          Bucket: this.opts.bucket,
          Key: this.objectKey(key),
          Body: fs.createReadStream(tmp),
          ContentLength: size,
          ContentType: opts.contentType ?? 'application/octet-stream',
        }),
      );
    } finally {
      fs.rmSync(tmp, { force: true });
    }
    return { size, sha256 };
  }

  /** An S3 PUT that succeeded is already durable. */
  async write(key: string, data: Buffer): Promise<WrittenFile> {
    return { key, ...(await this.put(key, data)) };
  }

  async flushWritten(): Promise<void> {}

  async get(key: string): Promise<Readable> {
    const { client, s3 } = await this.load();
    const res = await client.send(new s3.GetObjectCommand({ Bucket: this.opts.bucket, Key: this.objectKey(key) }));
    return res.Body as Readable;
  }

  async delete(key: string): Promise<void> {
    const { client, s3 } = await this.load();
    await client.send(new s3.DeleteObjectCommand({ Bucket: this.opts.bucket, Key: this.objectKey(key) }));
  }

  async exists(key: string): Promise<boolean> {
    try {
      const body = await this.get(key);
      body.destroy();
      return true;
    } catch (error) {
      if ((error as { name?: string }).name === 'NoSuchKey') return false;
      throw error;
    }
  }
}

export function createStorage(config: Config, durable: DurableFs = nodeDurableFs): Storage {
  if (config.storage.kind === 's3') {
    // A successful PUT is S3's promise that the object is stored; the spooled copy is only for the upload.
    return new S3Storage({ ...config.storage.s3, bucket: config.storage.s3.bucket! }, path.join(config.dataDir, 'tmp'));
  }
  return new LocalStorage(config.storage.localDir, durable);
}
