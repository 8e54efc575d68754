// Reading inbound mail with mailparser into what the conversation model stores. Bad input never
// throws here: a message mailparser cannot read is kept with its headers (when they can be read),
// a short explanation as body, and the original .eml.
import type { AddressObject, EmailAddress, ParsedMail, SimpleParserOptions } from 'mailparser';

/** Attachments stored per message; the rest stay in the original .eml (counted as omitted). */
export const MAX_ATTACHMENTS = 100;
/** MIME parts mailparser reads before it refuses a message (its default is 1,000). */
export const MAX_MIME_PARTS = 5000;
/** Message-IDs kept from References (the first one and the newest ones). */
export const MAX_REFERENCES = 50;

const PARSER_OPTIONS: SimpleParserOptions = {
  keepCidLinks: true,
  skipTextToHtml: true,
  skipTextLinks: true,
  checksumAlgo: false,
  maxChildNodes: MAX_MIME_PARTS,
};

export interface InboundAttachment {
  filename: string;
  contentType: string;
  content: Buffer;
  contentId: string | null;
  inline: boolean;
}

export interface InboundMail {
  /** Message-ID without angle brackets, or null when the mail has none. */
  messageId: string | null;
  inReplyTo: string[];
  references: string[];
  subject: string | null;
  from: { address: string | null; name: string | null };
  replyTo: string | null;
  text: string;
  /** The sender's HTML, not yet sanitized. */
  html: string | null;
  attachments: InboundAttachment[];
  attachmentsOmitted: number;
  /** Auto-reply, delivery report or bulk/list mail: stored, never answered automatically. */
  automatic: boolean;
  /** Set when the body could not be read; the explanation is the stored text. */
  unreadable: string | null;
  /** Delivered-To, X-Original-To, To and Cc addresses: where a relay that names no recipient meant it to go. */
  headerRecipients: string[];
  /** The Date header, when it holds a valid time. */
  date: Date | null;
}

/** Message-IDs in a header value: `<a@b> <c@d>`, or bare ids when a sender left out the brackets. */
export function messageIds(value: string | undefined | null): string[] {
  if (!value) return [];
  const bracketed = [...value.matchAll(/<([^<>\s\u0000-\u001f\u007f]{1,500})>/g)].map((m) => m[1]);
  if (bracketed.length) return bracketed;
  return value
    .split(/[\s,]+/)
    .map((v) => v.trim())
    .filter((v) => v.includes('@') && v.length <= 500 && !/[\u0000-\u001f\u007f<>]/.test(v));
}

/** The unfolded values of every occurrence of a header (from the raw lines). */
function rawHeaderValues(parsed: ParsedMail, key: string): string[] {
  return parsed.headerLines
    .filter((h) => h.key === key)
    .map((h) => h.line.slice(h.line.indexOf(':') + 1).replace(/\r?\n[ \t]+/g, ' ').trim());
}

function firstMailbox(obj: AddressObject | AddressObject[] | undefined): EmailAddress | undefined {
  const list = Array.isArray(obj) ? obj : obj ? [obj] : [];
  for (const o of list) {
    for (const v of o.value) {
      if (v.address) return v;
      const member = v.group?.find((g) => g.address);
      if (member) return member;
    }
  }
  return undefined;
}

function headerText(parsed: ParsedMail, key: string): string {
  const v = parsed.headers.get(key);
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && typeof v[0] === 'string') return v.join(' ');
  return '';
}

/** RFC 3834 Auto-Submitted, multipart/report delivery reports, Precedence bulk/junk/list, X-Autoreply. */
export function isAutomatic(parsed: ParsedMail): boolean {
  const autoSubmitted = headerText(parsed, 'auto-submitted').trim().toLowerCase();
  if (autoSubmitted && !autoSubmitted.startsWith('no')) return true;
  const contentType = parsed.headers.get('content-type') as { value?: string } | undefined;
  if (contentType?.value?.toLowerCase() === 'multipart/report') return true;
  if (/^\s*(bulk|junk|list)\b/i.test(headerText(parsed, 'precedence'))) return true;
  if (/^\s*yes\b/i.test(headerText(parsed, 'x-autoreply')) || headerText(parsed, 'x-autorespond').trim() !== '') return true;
  return false;
}

function capReferences(ids: string[]): string[] {
  const unique = [...new Set(ids)];
  if (unique.length <= MAX_REFERENCES) return unique;
  return [unique[0], ...unique.slice(unique.length - (MAX_REFERENCES - 1))];
}

/** The text without the blank (whitespace-only) lines at its end; indentation and inner blank lines stay. */
export function trimTrailingBlankLines(text: string): string {
  const trimmed = text.replace(/(?:\r?\n[^\S\r\n]*)+$/, '');
  return trimmed.trim() === '' ? '' : trimmed;
}

function fromParsed(parsed: ParsedMail, unreadable: string | null): InboundMail {
  const from = firstMailbox(parsed.from);
  const replyTo = firstMailbox(parsed.replyTo);
  const all = parsed.attachments ?? [];
  const attachments = all.slice(0, MAX_ATTACHMENTS).map((a, i) => ({
    filename: cleanFilename(a.filename, a.contentType, i),
    contentType: cleanContentType(a.contentType),
    content: a.content,
    contentId: (a.cid ?? a.contentId?.replace(/^<|>$/g, ''))?.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 500) || null,
    inline: a.related === true || (a.contentDisposition === 'inline' && !!a.contentId),
  }));
  const text = unreadable ?? trimTrailingBlankLines((parsed.text ?? '').replace(/\u0000/g, ''));
  return {
    messageId: messageIds(parsed.messageId)[0] ?? null,
    inReplyTo: rawHeaderValues(parsed, 'in-reply-to').flatMap(messageIds),
    references: capReferences(rawHeaderValues(parsed, 'references').flatMap(messageIds)),
    subject: parsed.subject?.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '').trim() || null,
    from: { address: from?.address ?? null, name: from?.name?.trim() || null },
    replyTo: replyTo?.address ?? null,
    text,
    html: unreadable === null && typeof parsed.html === 'string' && parsed.html.trim() ? parsed.html.replace(/\u0000/g, '') : null,
    attachments: unreadable === null ? attachments : [],
    attachmentsOmitted: unreadable === null ? Math.max(0, all.length - MAX_ATTACHMENTS) : 0,
    automatic: isAutomatic(parsed),
    unreadable,
    headerRecipients: headerRecipients(parsed),
    date: parsed.date instanceof Date && !Number.isNaN(parsed.date.getTime()) && parsed.headers.has('date') ? parsed.date : null,
  };
}

function headerRecipients(parsed: ParsedMail): string[] {
  const out: string[] = [];
  for (const key of ['delivered-to', 'x-original-to']) {
    for (const v of rawHeaderValues(parsed, key)) out.push(...messageIds(`<${v.replace(/^<|>$/g, '')}>`));
  }
  for (const obj of [parsed.to, parsed.cc]) {
    for (const o of Array.isArray(obj) ? obj : obj ? [obj] : []) {
      for (const v of o.value) {
        if (v.address) out.push(v.address);
        for (const g of v.group ?? []) if (g.address) out.push(g.address);
      }
    }
  }
  return [...new Set(out)];
}

export function cleanFilename(name: string | undefined, contentType: string, index: number): string {
  const cleaned = (name ?? '')
    .replace(/[\u0000-\u001f\u007f/\\]/g, '_')
    .trim()
    .slice(0, 255);
  if (cleaned && cleaned !== '.' && cleaned !== '..') return cleaned;
  const ext = contentType.split('/')[1]?.replace(/[^a-z0-9.+-]/gi, '').slice(0, 10);
  return `attachment-${index + 1}${ext ? `.${ext}` : ''}`;
}

export function cleanContentType(type: string | undefined): string {
  const t = (type ?? '').trim().toLowerCase();
  return /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/.test(t) ? t : 'application/octet-stream';
}

/** The header block of a raw message (up to the first empty line), for reading a broken message's headers. */
function headerBlock(raw: Buffer): Buffer {
  const limit = Math.min(raw.length, 1024 * 1024);
  for (let i = 0; i < limit - 1; i++) {
    if (raw[i] === 0x0a && (raw[i + 1] === 0x0a || (raw[i + 1] === 0x0d && raw[i + 2] === 0x0a))) return raw.subarray(0, i + 1);
  }
  return raw.subarray(0, limit);
}

let mailparser: Promise<typeof import('mailparser')> | undefined;
/** mailparser, loaded on first use: a server that receives no mail starts faster and smaller. */
export const loadMailparser = () => (mailparser ??= import('mailparser'));

export async function parseMail(raw: Buffer): Promise<InboundMail> {
  const { simpleParser } = await loadMailparser();
  try {
    return fromParsed(await simpleParser(raw, PARSER_OPTIONS), null);
  } catch (error) {
    return parseHeadersOnly(raw, error instanceof Error ? error.message : String(error));
  }
}

/** A header block alone (as a mailbox scan fetches it): the same fields as parseMail, without a body. */
export async function parseHeaderBlock(headers: Buffer): Promise<InboundMail> {
  const { simpleParser } = await loadMailparser();
  try {
    return fromParsed(await simpleParser(Buffer.concat([headers, Buffer.from('\r\n\r\n')]), { ...PARSER_OPTIONS, maxChildNodes: 10 }), null);
  } catch (error) {
    return parseHeadersOnly(headers, error instanceof Error ? error.message : String(error));
  }
}

/** A message whose body cannot be read: its headers (when they can be read) and an explanation. */
export async function parseHeadersOnly(raw: Buffer, reason: string): Promise<InboundMail> {
  const note = `This message could not be read (${reason.slice(0, 200)}). The original is kept.`;
  const { simpleParser } = await loadMailparser();
  try {
    const headersOnly = await simpleParser(Buffer.concat([headerBlock(raw), Buffer.from('\r\n\r\n')]), { ...PARSER_OPTIONS, maxChildNodes: 10 });
    return fromParsed(headersOnly, note);
  } catch {
    return {
      messageId: null,
      inReplyTo: [],
      references: [],
      subject: null,
      from: { address: null, name: null },
      replyTo: null,
      text: note,
      html: null,
      attachments: [],
      attachmentsOmitted: 0,
      automatic: false,
      unreadable: note,
      headerRecipients: [],
      date: null,
    };
  }
}
