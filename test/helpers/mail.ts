// Mail parts for tests: a nodemailer client and a bare SMTP dialog for the ingress listener,
// ready-made e-mail channels (their SMTP account logs in to helpers/smtp-sink.ts), and an
// S3-compatible server (s3rver). Outbound mail is caught with helpers/smtp-sink.ts.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import S3rver from 's3rver';
import { SMTPServer } from 'smtp-server';
import { createEmailChannel } from '../../src/channels/service.js';
import type { Ctx } from '../../src/context.js';
import type { Clock } from '../../src/platform/clock.js';
import { randomText } from '../../src/platform/ids.js';
import { type Seed, seedWorkspace } from './fixtures.js';
import { startTestServer, type TestServer, tempDir } from './server.js';
import { type SmtpSink, startSmtpSink } from './smtp-sink.js';

/** The SMTP ingress port of a test server started with SVC_INGRESS_SECRET. */
export function ingressPort(s: TestServer): number {
  const info = s.server.parts.mail?.info?.smtp as string | undefined;
  if (!info) throw new Error('the SMTP ingress is not running (set SVC_INGRESS_SECRET)');
  return Number(info.slice(info.lastIndexOf(':') + 1));
}

/** Sends one message to the ingress over a real SMTP session; rejects with the server's answer. */
export async function sendToIngress(
  port: number,
  message: Mail.Options & { envelope?: { from: string; to: string[] } },
  opts: { auth?: { user: string; pass: string } } = {},
) {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    ignoreTLS: true,
    auth: opts.auth,
    connectionTimeout: 5000,
    socketTimeout: 10_000,
  });
  try {
    return await transport.sendMail({ from: 'Customer <customer@example.com>', ...message });
  } finally {
    transport.close();
  }
}

/** The SMTP login of channels made by seedEmailChannel: start the sink with it (startSmtpSink(SINK_LOGIN)). */
export const SINK_LOGIN = { username: 'mailer', password: 'smtp-secret-pw' };

/** An e-mail channel with an SMTP account pointing at the sink (or without SMTP when no port). */
export async function seedEmailChannel(
  ctx: Ctx,
  seed: { workspaceId: string; inboxId: string },
  opts: { smtpPort?: number; address?: string; password?: string } = {},
) {
  return createEmailChannel(ctx, {
    workspaceId: seed.workspaceId,
    inboxId: seed.inboxId,
    name: 'Support mail',
    address: opts.address ?? `support-${randomText(8)}@example.com`,
    displayName: 'Acme Support',
    ...(opts.smtpPort
      ? {
          smtpHost: '127.0.0.1',
          smtpPort: opts.smtpPort,
          tls: 'none' as const,
          smtpUsername: SINK_LOGIN.username,
          smtpPassword: opts.password ?? SINK_LOGIN.password,
        }
      : {}),
  });
}

/** An e-mail channel made through the API, as the panel makes one; returns its id. */
export async function postEmailChannel(s: TestServer, token: string, channel: { inbox_id: string; name: string; address: string }): Promise<string> {
  const r = await s.request('POST', '/v1/channels', { token, body: { kind: 'email', ...channel } });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.id;
}

/** A channel as the API lists it (the list is the only read of a channel). */
export async function shownChannel(s: TestServer, token: string, id: string): Promise<any> {
  return ((await s.request('GET', '/v1/channels', { token })).body.data as any[]).find((c) => c.id === id);
}

/** A raw RFC 822 message. */
export function rawMail(headers: Record<string, string>, body = 'Hello there.\r\n'): Buffer {
  const lines = Object.entries({ From: 'Customer <customer@example.com>', Subject: 'Help', 'Message-ID': `<${randomText(12)}@example.com>`, ...headers })
    .filter(([, v]) => v !== '')
    .map(([k, v]) => `${k}: ${v}`);
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body}`);
}

export interface S3Server {
  endpoint: string;
  bucket: string;
  dir: string;
  close(): Promise<void>;
}

/** An S3-compatible server (s3rver) on 127.0.0.1 with one bucket, for SVC_STORAGE=s3. */
export async function startS3(): Promise<S3Server> {
  const dir = tempDir('svc-s3-');
  const bucket = `svc-${randomText(6)}`;
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: bucket }] });
  const addr = await server.run();
  return {
    endpoint: `http://127.0.0.1:${addr.port}`,
    bucket,
    dir,
    async close() {
      await server.close();
      fs.rmSync(path.resolve(dir), { recursive: true, force: true });
    },
  };
}

/** A bare SMTP client for protocol-level checks (answers at RCPT, SIZE, DATA). */
export class SmtpDialog {
  private buffer = '';
  private waiting: ((line: string) => void) | undefined;
  private constructor(private readonly socket: import('node:net').Socket) {
    socket.on('data', (d) => {
      this.buffer += d.toString('latin1');
      this.flush();
    });
  }

  static async open(port: number): Promise<{ dialog: SmtpDialog; greeting: string }> {
    const net = await import('node:net');
    const socket = net.connect(port, '127.0.0.1');
    const dialog = new SmtpDialog(socket);
    const greeting = await dialog.reply();
    return { dialog, greeting };
  }

  private flush() {
    // A complete reply ends with a line "NNN text" (a space after the code).
    const m = /(^|\r\n)(\d{3}) [^\r\n]*\r\n/.exec(this.buffer);
    if (!m || !this.waiting) return;
    const end = m.index + m[0].length;
    const reply = this.buffer.slice(0, end);
    this.buffer = this.buffer.slice(end);
    const w = this.waiting;
    this.waiting = undefined;
    w(reply.trim());
  }

  reply(): Promise<string> {
    return new Promise((resolve) => {
      this.waiting = resolve;
      this.flush();
    });
  }

  async send(line: string): Promise<string> {
    this.socket.write(line + '\r\n');
    return this.reply();
  }

  /** Writes raw bytes (message data) and waits for the answer after the final dot. */
  async data(raw: Buffer): Promise<string> {
    const text = raw.toString('latin1').replace(/\r?\n/g, '\r\n').replace(/^\./gm, '..');
    if (text) this.socket.write(text.endsWith('\r\n') ? text : text + '\r\n');
    this.socket.write('.\r\n');
    return this.reply();
  }

  close() {
    this.socket.end('QUIT\r\n');
    this.socket.destroy();
  }
}

export const INGRESS_SECRET = 'test-ingress-secret';

/** Delivers a raw message through POST /v1/ingress/email (the server needs SVC_INGRESS_SECRET=INGRESS_SECRET). */
export async function deliverMail(s: TestServer, to: string, headers: Record<string, string> = {}, body?: string) {
  const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(to)}`, { raw: rawMail({ To: to, ...headers }, body), token: INGRESS_SECRET });
  if (r.status !== 201) throw new Error(`ingress answered ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body.data[0] as { inbox_id: string; conversation_id: string; message_id: string; duplicate: boolean; new_conversation: boolean };
}

/** Events recorded after sequence number `after`, oldest first, with parsed data. */
/** The workspace's events after a seq; one member's own `notification` events (person_id set) are left out. */
export async function eventsAfter(s: TestServer, after: number) {
  const rows = await s.app.db.selectFrom('events').selectAll().where('seq', '>', after).where('person_id', 'is', null).orderBy('seq').execute();
  return rows.map((r) => ({ ...r, data: JSON.parse(r.data) as any }));
}

export async function lastEventSeq(s: TestServer): Promise<number> {
  const row = await s.app.db.selectFrom('events').select('seq').orderBy('seq', 'desc').limit(1).executeTakeFirst();
  return row ? Number(row.seq) : 0;
}

/**
 * A server that takes inbound mail with `ingressSecret`, its jobs waiting for the test, and a
 * workspace whose e-mail channel sends through an SMTP sink (that asks for SINK_LOGIN).
 */
export async function startMailingServer(opts: {
  ingressSecret: string;
  clock?: Clock;
}): Promise<{ s: TestServer; seed: Seed; address: string; sink: SmtpSink }> {
  const sink = await startSmtpSink(SINK_LOGIN);
  const s = await startTestServer({ env: { SVC_INGRESS_SECRET: opts.ingressSecret }, clock: opts.clock });
  await s.app.jobs.stop();
  const seed = await seedWorkspace(s.app);
  const address = (await seedEmailChannel(s.app, seed, { smtpPort: sink.port })).address!;
  return { s, seed, address, sink };
}

/**
 * A multipart body with a text part and an attachment whose name hides `.exe` behind a
 * right-to-left override (`invoice\u202Efdp.exe`): send it with
 * `Content-Type: multipart/mixed; boundary="<boundary>"`.
 */
export function rloAttachmentBody(boundary: string, text: string): string {
  return [
    `--${boundary}`,
    'Content-Type: text/plain',
    '',
    text,
    `--${boundary}`,
    'Content-Type: application/pdf',
    "Content-Disposition: attachment; filename*=UTF-8''invoice%E2%80%AEfdp.exe",
    'Content-Transfer-Encoding: base64',
    '',
    'TVqQAAMAAAAEAAAA',
    `--${boundary}--`,
    '',
  ].join('\r\n');
}
