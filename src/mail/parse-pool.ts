// MIME parsing in worker threads for the SMTP listener: mailparser is the largest piece of work per
// inbound mail, and in a worker it neither holds up the event loop (API requests, other SMTP
// sessions) nor stalls it on a pathological message, and it runs on another core. A parse that
// takes longer than PARSE_TIMEOUT_MS ends its worker (a fresh one replaces it) and the message is
// kept with its headers only, like any message mailparser cannot read.
import os from 'node:os';
import { type ResourceLimits, Worker } from 'node:worker_threads';
import type { MailboxMigrationItemsTable } from '../db/tables/mailbox-migration.js';
import type { ScanBatch } from '../mailbox-migration/copy/scanned-item.js';
import type { Logger } from '../platform/log.js';
import { type InboundMail, parseHeadersOnly, parseMail } from './parse.js';

export const PARSE_TIMEOUT_MS = 30_000;
const MAX_FAILURES = 5;

interface Job {
  id: number;
  /** Bytes handed over (for the timeout's log line). */
  bytes: number;
  /** The message to the worker, built when the job is posted. */
  post(id: number): { message: unknown; transfer: ArrayBuffer[] };
  resolve(answer: WorkerAnswer): void;
  reject(error: Error): void;
}

/** A worker's answer: a parsed mail, a scan batch's items, or why it failed. */
interface WorkerAnswer {
  id: number;
  mail?: InboundMail;
  items?: MailboxMigrationItemsTable[];
  error?: string;
}

interface Slot {
  worker: Worker;
  job?: Job;
  timer?: NodeJS.Timeout;
}

/**
 * The message that hands a raw source to a worker: an exact-size copy of its bytes, moved rather
 * than cloned. A clone copies the whole ArrayBuffer under a Buffer, and a small source (imapflow's
 * literals, most mail under 4 KiB) is a slice of Node's 8 KiB pool slab, so each message cost an
 * 8 KiB copy here and an 8 KiB allocation on the worker's heap. The caller's Buffer is left as it
 * is (it may be a slice of a shared slab, and the copy reads it again after the parse).
 */
export function parseJobMessage(id: number, raw: Buffer): { message: { id: number; raw: Uint8Array }; transfer: ArrayBuffer[] } {
  const copy = new Uint8Array(raw.byteLength);
  copy.set(raw);
  return { message: { id, raw: copy }, transfer: [copy.buffer] };
}

export class ParsePool {
  private readonly slots: Slot[] = [];
  private readonly waiting: Job[] = [];
  private nextId = 1;
  private closed = false;
  /** Workers that died in a row without finishing a job; past MAX_FAILURES the pool gives up. */
  private failures = 0;

  private readonly timeoutMs: number;
  private readonly resourceLimits: ResourceLimits | undefined;

  constructor(
    private readonly log: Logger,
    opts: { size?: number; timeoutMs?: number; resourceLimits?: ResourceLimits } = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? PARSE_TIMEOUT_MS;
    this.resourceLimits = opts.resourceLimits;
    const size = opts.size ?? Math.max(1, Math.min(2, os.availableParallelism() - 1));
    for (let i = 0; i < size; i++) this.slots.push(this.spawn());
  }

  private spawn(): Slot {
    const worker = new Worker(new URL('./parse-worker.js', import.meta.url), { resourceLimits: this.resourceLimits });
    worker.unref();
    const slot: Slot = { worker };
    worker.on('message', (msg: WorkerAnswer) => {
      const job = slot.job;
      if (!job || job.id !== msg.id) return;
      this.failures = 0;
      this.finish(slot);
      if (msg.error === undefined) job.resolve(msg);
      else job.reject(new Error(msg.error));
    });
    worker.on('error', (error) => {
      this.log.error('mail parser worker failed', { error });
      this.replace(slot, error);
    });
    worker.on('exit', () => {
      if (!this.closed && this.slots.includes(slot)) this.replace(slot, new Error('mail parser worker exited'));
    });
    return slot;
  }

  private replace(slot: Slot, error: Error) {
    const job = slot.job;
    this.finish(slot);
    const i = this.slots.indexOf(slot);
    if (i !== -1) this.slots.splice(i, 1);
    void slot.worker.terminate();
    // A timeout is the message's fault; workers that keep dying are the pool's.
    if (error.message !== 'parse timed out' && ++this.failures >= MAX_FAILURES && !this.closed) {
      this.log.error('mail parser workers keep failing; parsing on the main thread from now on', { error });
      this.closed = true;
      for (const s of this.slots.splice(0)) void s.worker.terminate();
      for (const waiting of this.waiting.splice(0)) waiting.reject(new Error('closing'));
    }
    if (!this.closed) this.slots.push(this.spawn());
    if (job) job.reject(error);
    this.pump();
  }

  private finish(slot: Slot) {
    clearTimeout(slot.timer);
    slot.job = undefined;
    slot.timer = undefined;
    queueMicrotask(() => this.pump());
  }

  private pump() {
    for (const slot of this.slots) {
      if (slot.job) continue;
      const job = this.waiting.shift();
      if (!job) return;
      slot.job = job;
      slot.timer = setTimeout(() => {
        this.log.warn('mail parse timed out; keeping its headers only', { bytes: job.bytes });
        this.replace(slot, new Error('parse timed out'));
      }, this.timeoutMs);
      const { message, transfer } = job.post(job.id);
      slot.worker.postMessage(message, transfer);
    }
  }

  /**
   * Parses in a worker. A message that outlasts PARSE_TIMEOUT_MS or breaks its worker is kept with
   * its headers only (never parsed again on the main thread).
   */
  parse(raw: Buffer): Promise<InboundMail> {
    if (this.closed) return parseMail(raw);
    return this.run(raw.length, (id) => parseJobMessage(id, raw))
      .then((answer) => {
        const mail = answer.mail!;
        // Attachment contents arrive as plain Uint8Arrays; the rest of the code expects Buffers.
        for (const a of mail.attachments) a.content = Buffer.from(a.content.buffer, a.content.byteOffset, a.content.byteLength);
        return mail;
      })
      .catch((error: Error) => (error.message === 'closing' ? parseMail(raw) : parseHeadersOnly(raw, error.message)));
  }

  /**
   * A migration scan's batch of header blocks read into its items (scannedItems) in a worker, or by
   * `here` when the pool is closed or the worker fails. The batch's buffer is moved to the worker:
   * the caller must not read it afterwards (`here` reads the blocks it was made from).
   */
  scanItems(batch: ScanBatch, here: () => Promise<MailboxMigrationItemsTable[]>): Promise<MailboxMigrationItemsTable[]> {
    if (this.closed) return here();
    return this.run(batch.blocks.byteLength, (id) => ({ message: { id, scan: batch }, transfer: [batch.blocks.buffer as ArrayBuffer] }))
      .then((answer) => answer.items!)
      .catch(() => here());
  }

  private run(bytes: number, post: Job['post']): Promise<WorkerAnswer> {
    return new Promise<WorkerAnswer>((resolve, reject) => {
      this.waiting.push({ id: this.nextId++, bytes, post, resolve, reject });
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.waiting.splice(0)) job.reject(new Error('closing'));
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}
