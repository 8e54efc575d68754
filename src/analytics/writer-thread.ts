// On SQLite the event buffer's batches are written on a thread of their own (writer-worker.ts) with
// its own connection to the database file (issue 39, bench/analytics): a 500-event batch's
// transaction took 30–45 ms of the event loop, during which no tracker request was answered (the
// p99), and it was a third of the one thread's work per event. The thread starts with the first
// batch and ends after WRITER_IDLE_MS without one: it costs its own V8 heap, which an idle server
// does not keep (bench/startup). Its writes take SQLite's write lock like another process's
// (busy_timeout), and the server's checkpointer is told of them.
import { Worker } from 'node:worker_threads';
import type { Config } from '../config.js';
import { noteWriteElsewhere } from '../db/connection.js';
import type { AnalyticsEventsTable, Db } from '../db/schema.js';

type Batch = Omit<AnalyticsEventsTable, 'id' | 'visit_id'>[];

export interface WriterThreadData {
  file: string;
  waitMs: number;
  config: Config;
}

export type WriterRequest = { id: number; batch: Batch; nowMs: number } | { close: true };
export type WriterReply = { id: number; error?: { message: string; code?: string } };

export const WRITER_IDLE_MS = 10_000;

interface Thread {
  worker: Worker;
  /** Batches handed over and not yet answered, by id. */
  waiting: Map<number, { resolve(): void; reject(error: Error): void }>;
}

export class WriterThread {
  private thread: Thread | undefined;
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly file: string,
    private readonly config: Config,
    private readonly idleMs = WRITER_IDLE_MS,
  ) {}

  /** True while the thread is up (it starts with a batch and ends when idle). */
  get running(): boolean {
    return this.thread !== undefined;
  }

  /** Writes a batch as writeBatch does, at the time `now`; resolves once committed. */
  write(batch: Batch, now: Date): Promise<void> {
    clearTimeout(this.idleTimer);
    const thread = (this.thread ??= this.start());
    // Held while a batch is under way: a stopping server waits for its last flush.
    thread.worker.ref();
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      thread.waiting.set(id, { resolve, reject });
      thread.worker.postMessage({ id, batch, nowMs: now.getTime() } satisfies WriterRequest);
    });
  }

  private start(): Thread {
    const workerData: WriterThreadData = { file: this.file, waitMs: this.config.databasePool.waitMs, config: this.config };
    const thread: Thread = { worker: new Worker(new URL('./writer-worker.js', import.meta.url), { workerData }), waiting: new Map() };
    thread.worker.on('message', (reply: WriterReply) => {
      const w = thread.waiting.get(reply.id);
      thread.waiting.delete(reply.id);
      noteWriteElsewhere(this.db);
      if (reply.error) w?.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
      else w?.resolve();
      if (!thread.waiting.size && this.thread === thread) this.idle(thread.worker);
    });
    const ended = (error: Error) => {
      if (this.thread === thread) this.thread = undefined;
      for (const w of thread.waiting.values()) w.reject(error);
      thread.waiting.clear();
    };
    thread.worker.on('error', ended);
    thread.worker.on('exit', () => ended(new Error('the analytics writer thread ended')));
    return thread;
  }

  private idle(worker: Worker): void {
    worker.unref();
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.end(), this.idleMs).unref();
  }

  private end(): Promise<void> {
    const worker = this.thread?.worker;
    this.thread = undefined;
    if (!worker) return Promise.resolve();
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.ref();
    worker.postMessage({ close: true } satisfies WriterRequest);
    return exited;
  }

  /** Ends the thread (after the batches already handed over: the thread takes messages in order). */
  close(): Promise<void> {
    clearTimeout(this.idleTimer);
    return this.end();
  }
}
