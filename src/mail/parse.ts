// Reading inbound mail with mailparser into what the conversation model stores. Bad input never
// throws here: a message mailparser cannot read is kept with its headers (when they can be read),
// a short explanation as body, and the original .eml.

import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { AddressObject, EmailAddress, ParsedMail, SimpleParserOptions } from 'mailparser';
import type { MailHeaders } from '../db/schema.js';
import { oneLine, withoutBidiControls } from '../platform/foreign-text.js';
import { isAutomatic } from './automatic.js';
import { mailDigest, mailDigests, normaliseText } from './digest.js';
import { type HeaderLine, headerBlockEnd, headerLibraries, headerValue, parsedHeaders } from './header-block.js';
import { htmlNestsDeeperThan, MAX_HTML_CHARS, MAX_HTML_DEPTH } from './html-limits.js';
import { emlName, forwardedSummary, isEnclosedMessage, rawBodyText, repairMime } from './unusual.js';

export { AUTOMATIC_HEADER_FIELDS, type HeaderValues, isAutomatic } from './automatic.js';
export { mailDigest } from './digest.js';

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

export interface MailAddress {
  name: string | null;
  address: string;
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
  /** The To and Cc headers as received. */
  to: MailAddress[];
  cc: MailAddress[];
  /** Identifies the message itself, whichever way it came (see mailDigest). */
  digest: string;
  /** The digest this mail was stored under before a Message-ID made the Date irrelevant (it included the Date); null when the same as digest. */
  priorDigest: string | null;
}

/** The identity of a received mail as the API shows it (`email` of a message). */
export function mailHeadersOf(mail: InboundMail): MailHeaders {
  return {
    message_id: mail.messageId,
    in_reply_to: mail.inReplyTo,
    references: mail.references,
    from: mail.from.address ? { name: mail.from.name, address: mail.from.address } : null,
    to: mail.to,
    cc: mail.cc,
    subject: mail.subject,
  };
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
    .map((h) =>
      h.line
        .slice(h.line.indexOf(':') + 1)
        .replace(/\r?\n[ \t]+/g, ' ')
        .trim(),
    );
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

function addressList(obj: AddressObject | AddressObject[] | undefined): MailAddress[] {
  const out: MailAddress[] = [];
  const add = (v: EmailAddress) => {
    const address = v.address?.replace(/[\u0000-\u001f\u007f]/g, '').trim();
    if (address) out.push({ name: v.name?.replace(/[\u0000-\u001f\u007f]/g, '').trim() || null, address: address.slice(0, 500) });
  };
  for (const o of Array.isArray(obj) ? obj : obj ? [obj] : []) {
    for (const v of o.value) {
      add(v);
      for (const g of v.group ?? []) add(g);
    }
  }
  return out.slice(0, 500);
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

let htmlToText: typeof import('html-to-text').convert | undefined;

/**
 * The text of an HTML body that came without one. mailparser makes it only when the HTML is the whole
 * message or stands beside a text part; HTML mail with attachments or inline images (an HTML part in
 * multipart/mixed or /related and no text part) would have no text to show, preview, search or send
 * on in webhooks. Unwrapped: the panel and the widget wrap lines to their width. Loaded on first use,
 * as mailparser is (which loads the same library).
 */
function textOfHtml(html: string): string {
  const input = html.length > MAX_HTML_CHARS ? html.slice(0, MAX_HTML_CHARS) : html;
  if (htmlNestsDeeperThan(input)) return `This message's HTML nests elements deeper than ${MAX_HTML_DEPTH} levels and could not be read. The original is kept.`;
  htmlToText ??= (createRequire(import.meta.url)('html-to-text') as typeof import('html-to-text')).convert;
  try {
    return trimTrailingBlankLines(htmlToText(input, { wordwrap: false, limits: { maxDepth: MAX_HTML_DEPTH } }));
  } catch {
    return '';
  }
}

/** `rawBody`: the undecoded body of a message that could not be parsed (what identifies it then). */
function fromParsed(parsed: ParsedMail, unreadable: string | null, rawBody?: Buffer): InboundMail {
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
  const parsedText = unreadable ?? trimTrailingBlankLines((parsed.text ?? '').replace(/\u0000/g, ''));
  const html = unreadable === null && typeof parsed.html === 'string' && parsed.html.trim() ? parsed.html.replace(/\u0000/g, '') : null;
  const text = parsedText === '' && html ? textOfHtml(html) : parsedText;
  const messageId = messageIds(parsed.messageId)[0] ?? null;
  const subject = parsed.subject ? oneLine(parsed.subject) || null : null;
  // mailparser dates a Date header it cannot read to the time of parsing; that is no date at all.
  const date =
    parsed.date instanceof Date &&
    !Number.isNaN(parsed.date.getTime()) &&
    parsed.headers.has('date') &&
    !Number.isNaN(Date.parse(rawHeaderValues(parsed, 'date')[0] ?? ''))
      ? parsed.date
      : null;
  const to = addressList(parsed.to);
  // The digest reads mailparser's text, not the text taken from HTML: stored mail keeps the identity it was stored with.
  const body = rawBody
    ? ['raw', createHash('sha256').update(rawBody).digest('hex')]
    : [normaliseText(parsedText), normaliseText(html ?? ''), ...all.map((a) => createHash('sha256').update(a.content).digest('hex'))];
  return {
    messageId,
    inReplyTo: rawHeaderValues(parsed, 'in-reply-to').flatMap(messageIds),
    references: capReferences(rawHeaderValues(parsed, 'references').flatMap(messageIds)),
    subject,
    from: { address: from?.address ?? null, name: from?.name ? oneLine(from.name) || null : null },
    replyTo: replyTo?.address ?? null,
    text,
    html,
    attachments: unreadable === null ? attachments : [],
    attachmentsOmitted: unreadable === null ? Math.max(0, all.length - MAX_ATTACHMENTS) : 0,
    automatic: isAutomatic((name) => rawHeaderValues(parsed, name)),
    unreadable,
    headerRecipients: headerRecipients(parsed),
    date,
    to,
    cc: addressList(parsed.cc),
    ...mailDigests({ messageId, date, from: from?.address ?? null, to: to.map((a) => a.address), subject, body }),
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
  const cleaned = withoutBidiControls(name ?? '')
    .replace(/[\u0000-\u001f\u007f-\u009f/\\]/g, '_')
    .trim()
    .slice(0, 255);
  // An attached message is kept as an .eml file (which mail programs open), whatever its sender named it.
  if (/^message\/(rfc822|global)$/i.test(contentType.trim()))
    return cleaned && cleaned !== '.' && cleaned !== '..' ? (/\.eml$/i.test(cleaned) ? cleaned : `${cleaned.slice(0, 251)}.eml`) : emlName(null, index);
  if (cleaned && cleaned !== '.' && cleaned !== '..') return cleaned;
  const ext = contentType
    .split('/')[1]
    ?.replace(/[^a-z0-9.+-]/gi, '')
    .slice(0, 10);
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
  const direct = await parsePlainTextMail(raw);
  if (direct) return direct;
  return parseMailWithMailparser(raw);
}

/** parseMail through simpleParser alone: for every message parsePlainTextMail leaves, and what it is tested against. */
export async function parseMailWithMailparser(raw: Buffer, depth = 0): Promise<InboundMail> {
  const { simpleParser } = await loadMailparser();
  let mail: InboundMail;
  let parsed: ParsedMail;
  try {
    parsed = await simpleParser(repairMime(raw), PARSER_OPTIONS);
    mail = fromParsed(parsed, null);
  } catch (error) {
    return parseHeadersOnly(raw, error instanceof Error ? error.message : String(error));
  }
  const type = rawHeaderValues(parsed, 'content-type')[0];
  if (isEnclosedMessage(type) && depth < MAX_ENCLOSED_DEPTH && mail.attachments[0]) return withEnclosedMessage(mail, mail.attachments[0], depth);
  if (!mail.text.trim() && !mail.html && mail.attachments.length === 0 && mail.unreadable === null) mail.text = await rawBodyText(raw);
  return mail;
}

/** Messages enclosed in messages (a forward of a forward) read for their words; deeper ones stay files. */
const MAX_ENCLOSED_DEPTH = 3;

/**
 * A message that is a forwarded message: its words are the enclosed message's text under a summary
 * of its headers; the enclosed message is kept as an .eml file, then its own files.
 */
async function withEnclosedMessage(outer: InboundMail, enclosed: InboundAttachment, depth: number): Promise<InboundMail> {
  const inner = await parseMailWithMailparser(enclosed.content, depth + 1);
  const eml = { ...enclosed, filename: emlName(inner.subject, 0), contentType: 'message/rfc822', inline: false };
  const files = [eml, ...inner.attachments];
  return {
    ...outer,
    text: [forwardedSummary(inner), inner.text].filter((t) => t.trim()).join('\n\n'),
    html: null,
    attachments: files.slice(0, MAX_ATTACHMENTS),
    attachmentsOmitted: outer.attachmentsOmitted + inner.attachmentsOmitted + Math.max(0, files.length - MAX_ATTACHMENTS),
  };
}

// The one shape of message parsePlainTextMail reads: a single text/plain part in UTF-8 or ASCII,
// neither flowed nor an attachment, in a transfer encoding that is not base64. Anything else (a
// parameter other than charset, a comment, a header given twice) goes to mailparser.
const PLAIN_TEXT_TYPE = /^text\/plain\s*(?:;\s*charset\s*=\s*(?:"([^"\\]*)"|([^\s;"()<>@,:\\/[\]?=]+))\s*;?\s*)?$/i;
const PLAIN_TRANSFER_ENCODING = /^(?:7bit|8bit|binary|quoted-printable)$/i;

/**
 * A message that is one plain-text part (most replies of a support conversation), read directly:
 * the header block as parseHeaderBlock reads it, and the body decoded as mailparser decodes such a
 * part (the same quoted-printable decoder, UTF-8, line ends as LF). simpleParser builds a stream
 * pipeline per message, several times this CPU and garbage. Null for any other message.
 * `test/mail/plain-text-mail.test.ts` reads a corpus both ways and compares every field.
 */
export async function parsePlainTextMail(raw: Buffer): Promise<InboundMail | null> {
  const end = headerBlockEnd(raw);
  if (end > DIRECT_HEADER_BLOCK_BYTES) return null;
  const libraries = await headerLibraries();
  const block = raw.subarray(0, end);
  let lines: HeaderLine[];
  try {
    lines = new libraries.Headers(block).getList();
  } catch {
    return null;
  }
  const contentType = lines.filter((l) => l.key === 'content-type');
  const transferEncoding = lines.filter((l) => l.key === 'content-transfer-encoding');
  if (contentType.length > 1 || transferEncoding.length > 1 || lines.some((l) => l.key === 'content-disposition')) return null;
  let charset: string | undefined;
  if (contentType.length === 1) {
    const type = PLAIN_TEXT_TYPE.exec(headerValue(libraries.libmime, contentType[0].line));
    if (!type) return null;
    charset = type[1] ?? type[2];
  }
  // As mailparser: these names need no charset conversion; any other goes through iconv there.
  if (charset !== undefined && !['ascii', 'usascii', 'utf8'].includes(charset.toLowerCase().replace(/[^a-z0-9]+/g, ''))) return null;
  const encoding = transferEncoding.length === 1 ? headerValue(libraries.libmime, transferEncoding[0].line) : '';
  if (encoding && !PLAIN_TRANSFER_ENCODING.test(encoding)) return null;
  const body = raw.subarray(end);
  const decoded = encoding.toLowerCase() === 'quoted-printable' ? libraries.libqp.decode(body) : body;
  const parsed = parsedHeaders(libraries, block, lines);
  const text = decoded.toString().replace(/\r?\n/g, '\n');
  if (text) parsed.text = text;
  return fromParsed(parsed, null);
}

/**
 * Mail up to this size that parsePlainTextMail reads may be read on the calling thread: at most a
 * few milliseconds of the event loop, and no pathological case (no MIME tree, no charset conversion).
 */
export const DIRECT_MAIL_BYTES = 256 * 1024;

/**
 * parsePlainTextMail for a message of at most DIRECT_MAIL_BYTES, on the calling thread; null for any
 * other message (the caller hands it to a parse worker). A plain reply of ~1.3 KB costs ~35 µs here;
 * handing it to a worker and taking the answer back cost the main thread about as much again, and
 * the process ~65 µs more (the worker's copy, its answer's clone, their garbage).
 */
export async function parseSmallPlainTextMail(raw: Buffer): Promise<InboundMail | null> {
  if (raw.length > DIRECT_MAIL_BYTES) return null;
  try {
    return await parsePlainTextMail(raw);
  } catch {
    return null;
  }
}

/** Header blocks up to this size are read directly (parseHeaderBlock); larger ones go through mailparser. */
export const DIRECT_HEADER_BLOCK_BYTES = 64 * 1024;

/**
 * A header block alone (as a mailbox scan fetches it): the same header fields as parseMail, without
 * a body. Read directly with the libraries mailparser itself uses (mailsplit's Headers, libmime,
 * nodemailer's addressparser) and the same rules as its header processing, instead of simpleParser,
 * which builds a stream pipeline per message (about ten times the CPU per block). A block larger
 * than DIRECT_HEADER_BLOCK_BYTES is read by mailparser, within its size limits.
 */
export async function parseHeaderBlock(headers: Buffer): Promise<InboundMail> {
  if (headers.length > DIRECT_HEADER_BLOCK_BYTES) return parseHeaderBlockWithMailparser(headers);
  const libraries = await headerLibraries();
  try {
    return fromParsed(parsedHeaders(libraries, headers), null);
  } catch (error) {
    return parseHeadersOnly(headers, error instanceof Error ? error.message : String(error));
  }
}

/** parseHeaderBlock through simpleParser: for blocks too large to read directly, and what the direct read is tested against. */
export async function parseHeaderBlockWithMailparser(headers: Buffer): Promise<InboundMail> {
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
    const headers = headerBlock(raw);
    const headersOnly = await simpleParser(Buffer.concat([headers, Buffer.from('\r\n\r\n')]), { ...PARSER_OPTIONS, maxChildNodes: 10 });
    return fromParsed(headersOnly, note, raw.subarray(headers.length));
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
      to: [],
      cc: [],
      digest: mailDigest({ messageId: null, date: null, from: null, to: [], subject: null, body: ['raw', createHash('sha256').update(raw).digest('hex')] }),
      priorDigest: null,
    };
  }
}
