// Worker thread body of ParsePool: parses raw messages with mailparser off the main event loop, and
// reads a migration scan's header blocks into its items (a batch per message).
import { parentPort } from 'node:worker_threads';
import { type ScanBatch, scannedItems } from '../mailbox-migration/copy/scanned-item.js';
import { parseMail } from './parse.js';

parentPort!.on('message', async (job: { id: number; raw: Uint8Array } | { id: number; scan: ScanBatch }) => {
  if ('scan' in job) {
    try {
      parentPort!.postMessage({ id: job.id, items: await scannedItems(job.scan) });
    } catch (error) {
      parentPort!.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) });
    }
    return;
  }
  const raw = Buffer.from(job.raw.buffer, job.raw.byteOffset, job.raw.byteLength);
  try {
    const mail = await parseMail(raw);
    // Attachment contents are moved to the main thread, not copied: cloning would copy each one (and
    // a small one's whole 8 KiB pool slab) and leave this thread's copy waiting for its next GC.
    const transfer: ArrayBuffer[] = [];
    for (const a of mail.attachments) {
      let bytes: Uint8Array = a.content;
      if (bytes.byteOffset !== 0 || bytes.byteLength !== bytes.buffer.byteLength || transfer.includes(bytes.buffer as ArrayBuffer))
        bytes = new Uint8Array(bytes);
      a.content = bytes as Buffer;
      transfer.push(bytes.buffer as ArrayBuffer);
    }
    parentPort!.postMessage({ id: job.id, mail }, transfer);
  } catch (error) {
    parentPort!.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) });
  }
});
