// Worker thread body of ParsePool: parses raw messages with mailparser off the main event loop.
import { parentPort } from 'node:worker_threads';
import { parseMail } from './parse.js';

parentPort!.on('message', async (job: { id: number; raw: Uint8Array }) => {
  const raw = Buffer.from(job.raw.buffer, job.raw.byteOffset, job.raw.byteLength);
  try {
    parentPort!.postMessage({ id: job.id, mail: await parseMail(raw) });
  } catch (error) {
    parentPort!.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) });
  }
});
