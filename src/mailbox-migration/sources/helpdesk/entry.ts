// A help-desk entry (a Zendesk comment, a Help Scout thread) as stored while reading the provider,
// and how it is rendered as an RFC 822 message for the shared scan and copy: one Message-ID per
// entry, the ticket's first entry as the thread root that later ones answer (In-Reply-To), the
// author in From (agents are team addresses), the ticket subject, the original time in Date.
// Attachments are named here and downloaded (GET, within the size limit) only when the copy renders.
import { createRequire } from 'node:module';
import type MailComposerType from 'nodemailer/lib/mail-composer';

export interface HelpDeskPerson {
  name: string | null;
  email: string | null;
  /** The provider's id of the person (requester, customer or agent). */
  externalId: string | null;
}

export interface HelpDeskAttachment {
  name: string;
  contentType: string;
  size: number;
  /** Where its bytes are read (Zendesk content_url; Help Scout's attachment data endpoint). */
  url: string;
  /** Help Scout answers {data: base64} instead of the bytes. */
  encoding: 'raw' | 'json_base64';
}

export interface HelpDeskEntry {
  key: string;
  ticketId: string;
  /** Message-ID (without brackets) of the entry, and of the ticket's root it answers (null: it is the root). */
  messageId: string;
  inReplyTo: string | null;
  subject: string | null;
  sentAt: string;
  author: HelpDeskPerson & { role: 'customer' | 'agent' };
  requester: HelpDeskPerson | null;
  note: boolean;
  text: string | null;
  html: string | null;
  tags: string[];
  /** The provider's status of the ticket when read (shown in the message details). */
  status: string | null;
  attachments: HelpDeskAttachment[];
}

/** Header-safe display name. */
const display = (p: HelpDeskPerson, fallback: string) => {
  const address = p.email ?? fallback;
  return p.name ? { name: p.name.replace(/[\r\n]+/g, ' ').slice(0, 200), address } : address;
};

export interface RenderOptions {
  /** The support address customers wrote to (the mailbox address or the channel's). */
  supportAddress: string;
  /** Bytes of each attachment; null: left out (too large, or not kept). */
  attachmentBytes?: Map<number, Buffer | null>;
}

export async function renderEntry(entry: HelpDeskEntry, opts: RenderOptions): Promise<Buffer> {
  const fallback = `unknown-${entry.author.externalId ?? 'person'}@helpdesk.invalid`;
  const from = display(entry.author, fallback);
  const to = entry.author.role === 'agent' ? (entry.requester ? display(entry.requester, opts.supportAddress) : opts.supportAddress) : opts.supportAddress;
  const attachments = [];
  const left: string[] = [];
  for (const [i, a] of entry.attachments.entries()) {
    const bytes = opts.attachmentBytes?.get(i);
    if (bytes) attachments.push({ filename: a.name, content: bytes, contentType: a.contentType });
    else left.push(a.name);
  }
  const text = (entry.text ?? '') + (left.length && opts.attachmentBytes ? `\n\n[Attachments left in the help desk: ${left.join(', ')}]` : '');
  // Required on first use: a server that never copies from a help desk does not load nodemailer.
  const MailComposer = createRequire(import.meta.url)('nodemailer/lib/mail-composer') as typeof MailComposerType;
  const composer = new MailComposer({
    from,
    to,
    subject: entry.subject ?? '(no subject)',
    messageId: `<${entry.messageId}>`,
    inReplyTo: entry.inReplyTo ? `<${entry.inReplyTo}>` : undefined,
    references: entry.inReplyTo ? [`<${entry.inReplyTo}>`] : undefined,
    date: new Date(entry.sentAt),
    text,
    html: entry.html ?? undefined,
    attachments,
  });
  return new Promise<Buffer>((resolve, reject) => composer.compile().build((error, message) => (error ? reject(error) : resolve(message))));
}

/** The header block of an entry (what the scan reads). */
export async function renderHeaders(entry: HelpDeskEntry, supportAddress: string): Promise<Buffer> {
  const raw = await renderEntry({ ...entry, text: '', html: null, attachments: [] }, { supportAddress });
  const end = raw.indexOf('\r\n\r\n');
  return end < 0 ? raw : raw.subarray(0, end);
}

/** The size the scan shows for an entry: its text and its attachments. */
export function entrySize(entry: HelpDeskEntry): number {
  return Buffer.byteLength(entry.text ?? '') + Buffer.byteLength(entry.html ?? '') + entry.attachments.reduce((s, a) => s + a.size, 0) + 1024;
}
