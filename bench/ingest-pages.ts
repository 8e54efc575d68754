// bench/ingest-pages: what one inbound mail writes to SQLite, by table and index. The bench's mails
// go one at a time over SMTP; after each 250 (and a pause for the background work it causes: the
// notification job, the webhook outbox) the WAL frames written since are read from the `-wal` file
// (each frame is one page; the wal-index header in `-shm` says where the last one is), and at the
// end dbstat names the b-tree each page belongs to. Every frame costs SQLite a copy, a checksum and
// two `pwrite`s, and a page a mail touches is written again by every commit that touches it.
// SQLite only (the default database).
//   npm run build && node dist/bench/ingest-pages.js [mails] [warm-up mails]
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { benchMail, startIngestServer } from './ingest-scene.js';
import { figure } from './lib.js';

if (process.env.SVC_TEST_DATABASE_URL) throw new Error('bench/ingest-pages reads SQLite files: unset SVC_TEST_DATABASE_URL');
const COUNT = Math.min(Number(process.argv[2] ?? 300), 5_000);
const WARMUP = Math.min(Number(process.argv[3] ?? 300), 5_000);
const SETTLE_MS = 150;
const WAL_HEADER = 32;
const FRAME_HEADER = 24;

const SQLite = createRequire(import.meta.url)('better-sqlite3') as typeof import('better-sqlite3');
const ingest = await startIngestServer();
const transport = nodemailer.createTransport({ host: '127.0.0.1', port: ingest.port, secure: false, ignoreTLS: true, pool: true, maxConnections: 1 });
try {
  const dbFile = path.join(ingest.te.dataDir, 'svc.db');
  const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  for (let i = 0; i < WARMUP; i++) await transport.sendMail(benchMail(i));
  await settle();
  const shm = fs.openSync(`${dbFile}-shm`, 'r');
  const wal = fs.openSync(`${dbFile}-wal`, 'r');
  const header = Buffer.alloc(48);
  const walHeader = Buffer.alloc(WAL_HEADER);
  fs.readSync(wal, walHeader, 0, WAL_HEADER, 0);
  const pageSize = walHeader.readUInt32BE(8);
  // mxFrame of the wal-index header (native byte order; every machine this runs on is little-endian).
  const lastFrame = () => (fs.readSync(shm, header, 0, header.length, 0), header.readUInt32LE(16));
  const writes = new Map<number, number>();
  let frames = 0;
  let commits = 0;
  let last = lastFrame();
  const frame = Buffer.alloc(FRAME_HEADER);
  for (let i = 0; i < COUNT; i++) {
    await transport.sendMail(benchMail(WARMUP + i));
    await settle();
    const now = lastFrame();
    // A writer that found the WAL checkpointed whole starts it again from its first frame.
    for (let f = now >= last ? last + 1 : 1; f <= now; f++) {
      fs.readSync(wal, frame, 0, FRAME_HEADER, WAL_HEADER + (f - 1) * (FRAME_HEADER + pageSize));
      const page = frame.readUInt32BE(0);
      writes.set(page, (writes.get(page) ?? 0) + 1);
      frames++;
      if (frame.readUInt32BE(4) !== 0) commits++;
    }
    last = now;
  }
  fs.closeSync(shm);
  fs.closeSync(wal);
  const db = new SQLite(dbFile, { readonly: true });
  const owner = new Map<number, string>();
  for (const row of db.prepare('select name, pageno from dbstat').all() as { name: string; pageno: number }[]) owner.set(row.pageno, row.name);
  db.close();
  const byTree = new Map<string, number>();
  for (const [page, n] of writes) {
    const name = owner.get(page) ?? '(freed since)';
    byTree.set(name, (byTree.get(name) ?? 0) + n);
  }
  figure('mails', COUNT, 'one at a time');
  figure('wal_frames_per_mail', frames / COUNT, 'pages');
  figure('commits_per_mail', commits / COUNT);
  for (const [name, n] of [...byTree].sort((a, b) => b[1] - a[1])) figure(`pages_per_mail.${name}`, n / COUNT);
} finally {
  transport.close();
  await ingest.stop();
}
