// Raw messages for old mailboxes in tests and benches, built by nodemailer's MIME composer.
import MailComposer from 'nodemailer/lib/mail-composer';
import { randomText } from '../../src/platform/ids.js';

export interface MailSpec {
  from: string;
  to: string | string[];
  cc?: string[];
  subject: string;
  /** Without angle brackets; a random one when left out (null: no Message-ID header at all). */
  messageId?: string | null;
  inReplyTo?: string;
  references?: string[];
  date: Date;
  text?: string;
  html?: string;
  attachments?: { filename: string; content: Buffer | string; contentType?: string }[];
  headers?: Record<string, string>;
}

export function newMessageId(domain = 'mail.example'): string {
  return `${randomText(16)}@${domain}`;
}

export async function buildMail(spec: MailSpec): Promise<Buffer> {
  const composer = new MailComposer({
    from: spec.from,
    to: spec.to,
    cc: spec.cc,
    subject: spec.subject,
    messageId: spec.messageId === null ? undefined : `<${spec.messageId ?? newMessageId()}>`,
    inReplyTo: spec.inReplyTo ? `<${spec.inReplyTo}>` : undefined,
    references: spec.references?.map((r) => `<${r}>`),
    date: spec.date,
    text: spec.text ?? `Message about ${spec.subject}.`,
    html: spec.html,
    attachments: spec.attachments,
    headers: spec.headers,
  });
  const built = await new Promise<Buffer>((resolve, reject) => composer.compile().build((error, message) => (error ? reject(error) : resolve(message))));
  if (spec.messageId === null) return Buffer.from(built.toString('binary').replace(/^Message-ID: .*\r\n/im, ''), 'binary');
  return built;
}

export const DAY_MS = 86_400_000;

export function daysAgo(now: Date, days: number, hours = 0): Date {
  return new Date(now.getTime() - days * DAY_MS - hours * 3_600_000);
}
