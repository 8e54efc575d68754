// The floors of bench/ingest, run as a child process that prints its port on stdout.
// - no argument: a bare smtp-server that accepts every recipient and only consumes the stream.
// - `--durable <dir>`: the same work svc does for a mail, done the least costly way: smtp-server,
//   mailparser's simpleParser, the raw bytes written to a new file and one row of the parsed
//   message in SQLite (WAL, `synchronous = NORMAL` as svc), group-committed as svc's batcher does:
//   the files of the mails waiting are fdatasync'ed with their directory flushed once, then one
//   transaction inserts their rows, then the WAL is fdatasync'ed before their 250s; the next
//   group's files are flushed while the last group's WAL flush runs (src/db/batch.ts).
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

const durableIndex = process.argv.indexOf('--durable');
const dir = durableIndex === -1 ? undefined : process.argv[durableIndex + 1];

const call = <T>(fn: (cb: (error: NodeJS.ErrnoException | null, value?: T) => void) => void) =>
  new Promise<T>((resolve, reject) => fn((error, value) => (error ? reject(error) : resolve(value as T))));

interface Work {
  fd: number;
  row: unknown[];
  resolve(): void;
  reject(error: unknown): void;
}

/** Stores mails durably in `dir`: `floor.db` and one `.eml` per mail under `eml/`. */
function durableStore(dir: string): (raw: Buffer) => Promise<void> {
  const emlDir = path.join(dir, 'eml');
  fs.mkdirSync(emlDir, { recursive: true });
  const file = path.join(dir, 'floor.db');
  const db = new SQLite(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('wal_autocheckpoint = 10000');
  db.exec(`create table if not exists messages (
    id integer primary key, message_id text, from_address text, to_address text, subject text, sent_at text,
    text_body text, html_body text, headers text, attachments text, raw_file text not null)`);
  const insert = db.prepare(
    'insert into messages (message_id, from_address, to_address, subject, sent_at, text_body, html_body, headers, attachments, raw_file) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const insertAll = db.transaction((works: Work[]) => {
    for (const w of works) insert.run(...w.row);
  });
  const dirFd = fs.openSync(emlDir, 'r');
  let walFd: number | undefined;
  const pending: Work[] = [];
  let pumping = false;
  let walFlush: Promise<void> = Promise.resolve();
  let n = 0;

  async function pump(): Promise<void> {
    if (pumping) return;
    pumping = true;
    try {
      while (pending.length) {
        const works = pending.splice(0, 32);
        try {
          // Stage 1: the group's files and their directory (alongside the last group's WAL flush).
          await Promise.all([
            ...works.map(async (w) => {
              try {
                await call<void>((cb) => fs.fdatasync(w.fd, cb));
              } finally {
                fs.close(w.fd, () => {});
              }
            }),
            call<void>((cb) => fs.fsync(dirFd, cb)),
          ]);
          await walFlush;
          // Stage 2: one transaction, then the WAL flushed before the answers.
          insertAll(works);
        } catch (error) {
          for (const w of works) w.reject(error);
          continue;
        }
        const wal = (walFd ??= fs.openSync(`${file}-wal`, 'r'));
        walFlush = call<void>((cb) => fs.fdatasync(wal, cb)).then(
          () => {
            for (const w of works) w.resolve();
          },
          (error) => {
            for (const w of works) w.reject(error);
          },
        );
      }
    } finally {
      pumping = false;
    }
  }

  return async (raw) => {
    const mail = await simpleParser(raw);
    const name = `${process.pid}-${++n}.eml`;
    const fd = await call<number>((cb) => fs.open(path.join(emlDir, name), fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600, cb));
    for (let offset = 0; offset < raw.length; ) offset += await call<number>((cb) => fs.write(fd, raw, offset, raw.length - offset, null, cb));
    const row = [
      mail.messageId ?? null,
      mail.from?.text ?? null,
      Array.isArray(mail.to) ? mail.to.map((a) => a.text).join(', ') : (mail.to?.text ?? null),
      mail.subject ?? null,
      mail.date?.toISOString() ?? null,
      mail.text ?? null,
      typeof mail.html === 'string' ? mail.html : null,
      JSON.stringify(mail.headerLines),
      JSON.stringify(mail.attachments.map((a) => ({ filename: a.filename, type: a.contentType, size: a.size }))),
      name,
    ];
    await new Promise<void>((resolve, reject) => {
      pending.push({ fd, row, resolve, reject });
      void pump();
    });
  };
}

const store = dir ? durableStore(dir) : undefined;

const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  disableReverseLookup: true,
  logger: false,
  size: 30 * 1024 * 1024,
  onData(stream, _session, callback) {
    if (!store) {
      stream.on('data', () => {});
      stream.on('end', () => callback(null, 'OK'));
      return;
    }
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      store(Buffer.concat(chunks)).then(
        () => callback(null, 'OK'),
        (error: Error) => callback(error),
      );
    });
  },
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
