// Data for lifecycle tests: mail with an attachment (so a conversation has stored files), the files
// in local storage, and the storage keys the database refers to.
import fs from 'node:fs';
import path from 'node:path';
import type { Db } from '../../src/db/schema.js';
import { randomText } from '../../src/platform/ids.js';
import { INGRESS_SECRET } from './mail.js';

/** A raw multipart message with a text part and one attachment. */
export function mailWithFile(to: string, opts: { from?: string; subject?: string; inReplyTo?: string; file?: string } = {}): Buffer {
  const boundary = `b-${randomText(10)}`;
  const lines = [
    `From: ${opts.from ?? `customer-${randomText(6)}@example.com`}`,
    `To: ${to}`,
    `Subject: ${opts.subject ?? 'Help'}`,
    `Message-ID: <${randomText(12)}@example.com>`,
    ...(opts.inReplyTo ? [`In-Reply-To: <${opts.inReplyTo}>`] : []),
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Hello, see the file.',
    `--${boundary}`,
    `Content-Type: application/octet-stream; name="${opts.file ?? 'report.bin'}"`,
    `Content-Disposition: attachment; filename="${opts.file ?? 'report.bin'}"`,
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from(`file ${randomText(20)}`).toString('base64'),
    `--${boundary}--`,
    '',
  ];
  return Buffer.from(lines.join('\r\n'));
}

/** Delivers a mail with an attachment through POST /v1/ingress/email. */
/** Anything that sends requests to a server: a TestServer, or a small client of a spawned one. */
export interface Requester {
  request(method: string, urlPath: string, opts: { raw?: Buffer; token?: string }): Promise<{ status: number; body: any }>;
}

export async function deliverWithFile(s: Requester, to: string, opts: Parameters<typeof mailWithFile>[1] = {}) {
  const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(to)}`, { raw: mailWithFile(to, opts), token: INGRESS_SECRET });
  if (r.status !== 201) throw new Error(`ingress answered ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body.data[0] as { inbox_id: string; conversation_id: string; message_id: string };
}

/** Every stored file (storage key) under the local storage of a data dir. */
export function storedKeys(dataDir: string): Set<string> {
  const root = path.join(dataDir, 'files');
  const out = new Set<string>();
  const walk = (dir: string) => {
    if (!fs.existsSync(dir)) return;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.name === '.tmp') continue;
      const full = path.join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else out.add(path.relative(root, full).split(path.sep).join('/'));
    }
  };
  walk(root);
  return out;
}

/** Storage keys the database refers to (attachments and raw .eml), optionally of one workspace. */
export async function referencedKeys(db: Db, workspaceId?: string): Promise<string[]> {
  let att = db.selectFrom('attachments').select('storage_key as key');
  let raw = db.selectFrom('messages').select('raw_storage_key as key').where('raw_storage_key', 'is not', null);
  if (workspaceId) {
    att = att.where('workspace_id', '=', workspaceId);
    raw = raw.where('workspace_id', '=', workspaceId);
  }
  const rows = [...(await att.execute()), ...(await raw.execute())];
  return rows.map((r) => r.key!);
}

export async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs = 30_000, what = 'condition'): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
