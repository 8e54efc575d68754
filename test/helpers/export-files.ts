// Export files for migration tests and the import bench: mbox text (mboxrd-escaped), zip archives
// built with yazl (entries from buffers or streams), hostile variants made by patching a built
// archive's bytes, and an uploader that sends a file in parts with their SHA-256 over HTTP.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yazl from 'yazl';

/** One mbox message: the separator line, and body lines beginning with `>*From ` escaped (mboxrd). */
export function mboxMessage(raw: Buffer | string, opts: { sender?: string; date?: Date } = {}): string {
  const text = (Buffer.isBuffer(raw) ? raw.toString('utf8') : raw).replace(/\r\n/g, '\n');
  const escaped = text.replace(/^(>*From )/gm, '>$1');
  // The separator line carries the delivery time: the message's Date header here.
  const header = /^Date: (.+)$/m.exec(text.split('\n\n')[0])?.[1];
  const d = opts.date ?? (header ? new Date(header) : new Date('2024-01-02T03:04:05Z'));
  // asctime, as mbox writers put it: "Tue Jan  2 03:04:05 2024".
  const [day, , mon] = d.toUTCString().split(' ');
  const date = `${day.replace(',', '')} ${mon} ${String(d.getUTCDate()).padStart(2, ' ')} ${d.toISOString().slice(11, 19)} ${d.getUTCFullYear()}`;
  return `From ${opts.sender ?? 'MAILER-DAEMON'} ${date}\n${escaped.endsWith('\n') ? escaped : `${escaped}\n`}\n`;
}

export function mbox(messages: (Buffer | string)[]): Buffer {
  return Buffer.from(messages.map((m) => mboxMessage(m)).join(''), 'utf8');
}

export type ZipEntry = { name: string; data: Buffer | string | (() => Readable); compress?: boolean; mtime?: Date };

/** A zip of the entries (directories come from the names). */
export function zipStream(entries: ZipEntry[]): Readable {
  const zip = new yazl.ZipFile();
  for (const e of entries) {
    const opts = { compress: e.compress ?? true, mtime: e.mtime ?? new Date('2024-01-02T03:04:05Z') };
    if (typeof e.data === 'function') zip.addReadStream(e.data(), e.name, opts);
    else zip.addBuffer(Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data), e.name, opts);
  }
  zip.end();
  return zip.outputStream as unknown as Readable;
}

export async function zipBuffer(entries: ZipEntry[]): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of zipStream(entries)) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Replaces every occurrence of `from` with `to` (same length): entry names in local and central headers. */
export function patchBytes(buf: Buffer, from: string, to: string): Buffer {
  if (from.length !== to.length) throw new Error('patches keep the length');
  const out = Buffer.from(buf);
  const needle = Buffer.from(from);
  let at = out.indexOf(needle);
  if (at === -1) throw new Error(`${from} not found`);
  while (at !== -1) {
    Buffer.from(to).copy(out, at);
    at = out.indexOf(needle, at + needle.length);
  }
  return out;
}

/** Sets the uncompressed size the central directory declares for an entry (a lying header). */
export function patchDeclaredSize(buf: Buffer, name: string, size: number): Buffer {
  const out = Buffer.from(buf);
  const sig = Buffer.from([0x50, 0x4b, 0x01, 0x02]);
  for (let at = out.indexOf(sig); at !== -1; at = out.indexOf(sig, at + 4)) {
    const nameLength = out.readUInt16LE(at + 28);
    if (out.toString('utf8', at + 46, at + 46 + nameLength) === name) {
      out.writeUInt32LE(size, at + 24);
      return out;
    }
  }
  throw new Error(`${name} not in the central directory`);
}

export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Reads a file (or buffer) as parts of `partBytes`. */
export async function* parts(source: Buffer | string, partBytes: number): AsyncGenerator<Buffer> {
  if (Buffer.isBuffer(source)) {
    for (let at = 0; at < source.length; at += partBytes) yield source.subarray(at, at + partBytes);
    return;
  }
  const fh = await fs.promises.open(source, 'r');
  try {
    for (;;) {
      const buf = Buffer.allocUnsafe(partBytes);
      const { bytesRead } = await fh.read(buf, 0, partBytes, null);
      if (bytesRead === 0) return;
      yield bytesRead === partBytes ? buf : buf.subarray(0, bytesRead);
      if (bytesRead < partBytes) return;
    }
  } finally {
    await fh.close();
  }
}

/** POSTs one part with its SHA-256 (or a given, wrong one). */
export async function sendPart(baseUrl: string, token: string, migrationId: string, part: number, data: Buffer, opts: { sha256?: string } = {}) {
  const res = await fetch(`${baseUrl}/v1/migrations/${migrationId}/upload/parts/${part}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream', 'x-part-sha256': opts.sha256 ?? sha256(data) },
    body: data as unknown as BodyInit,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/**
 * GET …/upload until the processing after complete has ended (read or failed). `settle` runs first
 * each time (in-process tests drain the job runner there; a spawned server needs nothing).
 */
export async function awaitProcessed(baseUrl: string, token: string, migrationId: string, opts: { settle?: () => Promise<unknown>; timeoutMs?: number } = {}) {
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  for (;;) {
    await opts.settle?.();
    const res = await fetch(`${baseUrl}/v1/migrations/${migrationId}/upload`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await res.json()) as any;
    if (res.status !== 200) throw new Error(`GET upload: ${res.status} ${JSON.stringify(body)}`);
    if (body.state !== 'processing') return body;
    if (Date.now() > deadline) throw new Error(`the upload is still processing: ${JSON.stringify(body.processing)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Uploads a whole file in parts and completes the upload (`completed`: the 202 answer, or the
 * refusal); then waits for the processing and gives the upload (`upload`: read or failed, with
 * `file` or `processing.error`) and the migration as they are after it.
 */
export async function uploadExport(
  baseUrl: string,
  token: string,
  migrationId: string,
  source: Buffer | string,
  opts: { partBytes?: number; sha256?: string; settle?: () => Promise<unknown> } = {},
) {
  let n = 0;
  for await (const part of parts(source, opts.partBytes ?? 8 * 1024 * 1024)) {
    const r = await sendPart(baseUrl, token, migrationId, ++n, part);
    if (r.status !== 200) throw new Error(`part ${n}: ${r.status} ${JSON.stringify(r.body)}`);
  }
  const res = await fetch(`${baseUrl}/v1/migrations/${migrationId}/upload/complete`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ parts: n, ...(opts.sha256 ? { sha256: opts.sha256 } : {}) }),
  });
  const completed = { status: res.status, body: (await res.json()) as any };
  if (res.status !== 202) return { completed, upload: null, migration: null, parts: n };
  const upload = await awaitProcessed(baseUrl, token, migrationId, { settle: opts.settle });
  const migration = (await (await fetch(`${baseUrl}/v1/migrations/${migrationId}`, { headers: { authorization: `Bearer ${token}` } })).json()) as any;
  return { completed, upload, migration, parts: n };
}
