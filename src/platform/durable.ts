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
  /** Flushes a file written by other means (a spooled temporary file, SQLite's WAL). */
  syncFile(file: string): Promise<void>;
  /** Flushes a directory's entries: files created or renamed in it, new subdirectories. */
  syncDir(dir: string): Promise<void>;
}

export const nodeDurableFs: DurableFs = {
  async createFile(file, data, mode, flushEntry) {
    const handle = await fs.promises.open(file, 'wx', mode);
    try {
      const flushData = handle.writeFile(data).then(() => handle.datasync());
      await Promise.all([flushData, flushEntry?.()]);
    } catch (error) {
      await handle.close();
      await fs.promises.rm(file, { force: true });
      throw error;
    }
    await handle.close();
  },
  async syncFile(file) {
    // fdatasync flushes the file's data (and its size), whichever descriptor wrote it.
    const handle = await fs.promises.open(file, 'r');
    try {
      await handle.datasync();
    } finally {
      await handle.close();
    }
  },
  async syncDir(dir) {
    const handle = await fs.promises.open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
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
