// Durable writes: what must be on disk before svc acknowledges something (an inbound mail's 250).
// `DurableFs` is the small set of file operations that flush to disk; the server uses `nodeDurableFs`,
// and tests pass a wrapper that records the order of the flushes.
import fs from 'node:fs';
import path from 'node:path';

export interface DurableFs {
  /**
   * Creates `file` with `data` and flushes its contents (fails with EEXIST when the file exists).
   * `flushEntry` (flushing the directory) is started as soon as the file exists, alongside the data
   * flush, and awaited with it: one disk round trip instead of two.
   */
  createFile(file: string, data: Buffer, mode: number, flushEntry?: () => Promise<void>): Promise<void>;
  /**
   * Creates `file` with `data` without flushing it (fails with EEXIST when the file exists); the
   * descriptor it answers stays open for `flushCreated`. A group commit flushes the files of its
   * works together before its commit (LocalStorage.write, flushWritten).
   */
  createUnflushed(file: string, data: Buffer, mode: number): Promise<number>;
  /** Flushes the data of a file made by `createUnflushed` and closes its descriptor, also when the flush fails. */
  flushCreated(file: string, fd: number): Promise<void>;
  /** Flushes a file written by other means (a spooled temporary file, SQLite's WAL). */
  syncFile(file: string): Promise<void>;
  /** Flushes a directory's entries: files created or renamed in it, new subdirectories. */
  syncDir(dir: string): Promise<void>;
}

const CREATE_NEW = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL;

const callback = {
  open: (file: string, flags: number, mode: number) =>
    new Promise<number>((resolve, reject) => fs.open(file, flags, mode, (error, fd) => (error ? reject(error) : resolve(fd)))),
  write: (fd: number, data: Buffer, offset: number) =>
    new Promise<number>((resolve, reject) => fs.write(fd, data, offset, data.length - offset, null, (error, n) => (error ? reject(error) : resolve(n)))),
  fdatasync: (fd: number) => new Promise<void>((resolve, reject) => fs.fdatasync(fd, (error) => (error ? reject(error) : resolve()))),
  fsync: (fd: number) => new Promise<void>((resolve, reject) => fs.fsync(fd, (error) => (error ? reject(error) : resolve()))),
  close: (fd: number) => new Promise<void>((resolve) => fs.close(fd, () => resolve())),
};

/**
 * Open descriptors of the directories flushed lately, so a directory flush is one call instead of
 * open, fsync and close. Bounded: past MAX_OPEN_DIRS the oldest is closed. Like LocalStorage's
 * known directories, it assumes a directory svc writes into is not removed and recreated while
 * it runs (its descriptor would then flush the removed one).
 */
const MAX_OPEN_DIRS = 256;
const openDirs = new Map<string, Promise<number>>();

function dirDescriptor(dir: string): Promise<number> {
  let fd = openDirs.get(dir);
  if (fd) {
    openDirs.delete(dir);
    openDirs.set(dir, fd);
    return fd;
  }
  fd = callback.open(dir, fs.constants.O_RDONLY, 0);
  openDirs.set(dir, fd);
  fd.catch(() => {
    if (openDirs.get(dir) === fd) openDirs.delete(dir);
  });
  for (const [oldest, oldFd] of openDirs) {
    if (openDirs.size <= MAX_OPEN_DIRS) break;
    openDirs.delete(oldest);
    void oldFd.then(callback.close, () => {});
  }
  return fd;
}

// The callback API rather than FileHandle promises: ingest makes several of these calls per mail,
// and each FileHandle call costs noticeably more main-thread time than the thread-pool work it hands off.
export const nodeDurableFs: DurableFs = {
  async createFile(file, data, mode, flushEntry) {
    const fd = await callback.open(file, CREATE_NEW, mode);
    try {
      const flushData = (async () => {
        for (let offset = 0; offset < data.length; ) offset += await callback.write(fd, data, offset);
        await callback.fdatasync(fd);
      })();
      await Promise.all([flushData, flushEntry?.()]);
    } catch (error) {
      await callback.close(fd);
      await fs.promises.rm(file, { force: true });
      throw error;
    }
    // The data is on disk once fdatasync returned; closing is not waited for.
    void callback.close(fd);
  },
  async createUnflushed(file, data, mode) {
    const fd = await callback.open(file, CREATE_NEW, mode);
    try {
      for (let offset = 0; offset < data.length; ) offset += await callback.write(fd, data, offset);
    } catch (error) {
      await callback.close(fd);
      await fs.promises.rm(file, { force: true });
      throw error;
    }
    return fd;
  },
  async flushCreated(_file, fd) {
    try {
      await callback.fdatasync(fd);
    } finally {
      void callback.close(fd);
    }
  },
  async syncFile(file) {
    // fdatasync flushes the file's data (and its size), whichever descriptor wrote it. The callback
    // calls here too: a WAL flush follows every group-committed batch of mail.
    const fd = await callback.open(file, fs.constants.O_RDONLY, 0);
    try {
      await callback.fdatasync(fd);
    } finally {
      void callback.close(fd);
    }
  },
  async syncDir(dir) {
    const fd = dirDescriptor(dir);
    try {
      await callback.fsync(await fd);
    } catch (error) {
      // A descriptor that failed once is not trusted again: the next flush opens the directory anew.
      if (openDirs.get(dir) === fd) {
        openDirs.delete(dir);
        void fd.then(callback.close, () => {});
      }
      throw error;
    }
  },
};

/**
 * Shares flushes between concurrent callers: a caller is answered by the first flush of its key
 * that starts after it asked. While one flush runs, every new request for the same key waits for
 * a single next one, so N writers into one directory (or N commits into one WAL) cost about two
 * flushes instead of N. Keys with nothing pending are forgotten.
 */
export class SharedFlush {
  private readonly pending = new Map<string, { running?: Promise<void>; next?: Promise<void> }>();

  constructor(private readonly flush: (key: string) => Promise<void>) {}

  sync(key: string): Promise<void> {
    let state = this.pending.get(key);
    if (!state) {
      state = {};
      this.pending.set(key, state);
    }
    if (state.next) return state.next;
    const running = state.running;
    if (!running) return this.start(key, state);
    const s = state;
    s.next = running.then(
      () => this.startNext(key, s),
      () => this.startNext(key, s),
    );
    return s.next;
  }

  private startNext(key: string, state: { running?: Promise<void>; next?: Promise<void> }): Promise<void> {
    state.next = undefined;
    return this.start(key, state);
  }

  private start(key: string, state: { running?: Promise<void>; next?: Promise<void> }): Promise<void> {
    const run = this.flush(key).finally(() => {
      if (state.running !== run) return;
      state.running = undefined;
      if (!state.next && this.pending.get(key) === state) this.pending.delete(key);
    });
    state.running = run;
    return run;
  }
}

/** The directories from `dir` up to and including `root` (both absolute, `dir` inside `root`). */
export function directoriesUpTo(dir: string, root: string): string[] {
  const out: string[] = [];
  for (let d = dir; ; d = path.dirname(d)) {
    out.push(d);
    if (d === root || d === path.dirname(d)) return out;
  }
}
