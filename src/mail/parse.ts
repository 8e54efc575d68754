// Reading inbound mail with mailparser into what the conversation model stores. Bad input never
// throws here: a message mailparser cannot read is kept with its headers (when they can be read),
// a short explanation as body, and the original .eml.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { domainToUnicode } from 'node:url';
import type { AddressObject, EmailAddress, ParsedMail, SimpleParserOptions } from 'mailparser';
import type { MailHeaders } from '../db/schema.js';
import { htmlNestsDeeperThan, MAX_HTML_CHARS, MAX_HTML_DEPTH } from './html-limits.js';

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

const normaliseText = (text: string) =>
  text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t]+$/gm, '')
    .trim();

/**
 * What makes two copies of a mail the same message, whichever way each came (sent directly,
 * forwarded, routed, read from the old mailbox): Message-ID, Date, From, To, Subject and body
 * (text, HTML and attachment contents). Normalised, so that trace headers added on the way, display
 * names, time-zone notation, folding, line endings and transfer encodings do not count.
 */
export function mailDigest(m: {
  messageId: string | null;
  date: Date | null;
  from: string | null;
  to: readonly string[];
  subject: string | null;
  body: readonly string[];
}): string {
  const parts = [
    m.messageId ?? '',
    m.date ? m.date.toISOString() : '',
    (m.from ?? '').trim().toLowerCase(),
    [...new Set(m.to.map((a) => a.trim().toLowerCase()))].sort().join(','),
    (m.subject ?? '').replace(/\s+/g, ' ').trim(),
    ...m.body,
  ];
  const hash = createHash('sha256');
  // Each part with its length in front, so that no two different lists of parts hash alike.
  for (const part of parts) hash.update(`${Buffer.byteLength(part)}:`).update(part);
  return hash.digest('hex');
}

/**
 * The digest of a received mail, and the one it had before (see InboundMail.priorDigest). With a
 * Message-ID, the Date does not count: a mail re-sent with a new Date (same Message-ID, sender,
 * recipients, subject and body) is the same message. Without one, the Date tells mails apart.
 */
function mailDigests(m: Parameters<typeof mailDigest>[0]): { digest: string; priorDigest: string | null } {
  const prior = mailDigest(m);
  if (!m.messageId || !m.date) return { digest: prior, priorDigest: null };
  return { digest: mailDigest({ ...m, date: null }), priorDigest: prior };
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

/** Every header an automatic-mail decision reads (a mailbox scan must fetch each of them). */
export const AUTOMATIC_HEADER_FIELDS = [
  'auto-submitted',
  'precedence',
  'content-type',
  'x-autoreply',
  'x-autorespond',
  'list-id',
  'list-unsubscribe',
  'from',
] as const;

/** The unfolded values of a header, by lower-case name, every occurrence. */
export type HeaderValues = (name: (typeof AUTOMATIC_HEADER_FIELDS)[number]) => string[];

/** Report types whose multipart/report is a machine's answer: delivery reports and read receipts. */
const AUTOMATIC_REPORT_TYPES = new Set(['delivery-status', 'disposition-notification']);

/** A parameter of a structured header value (`type/subtype; name=value; name="value"`), lower-cased. */
function headerParameter(value: string, name: string): string | null {
  for (const part of value.split(';').slice(1)) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim().toLowerCase() !== name) continue;
    return part
      .slice(eq + 1)
      .trim()
      .replace(/^"|"$/g, '')
      .trim()
      .toLowerCase();
  }
  return null;
}

/**
 * Automatic mail: stored, never answered automatically, never reopens a conversation, and a thread
 * of only such mail is not imported by a migration. Auto-Submitted other than `no` (RFC 3834),
 * X-Autoreply/X-Autorespond, Precedence bulk/junk/list, mailing lists and newsletters (List-Id,
 * List-Unsubscribe), delivery reports and read receipts (multipart/report of those report types),
 * and mail from MAILER-DAEMON or postmaster. The one rule for ingress, the migration scan and sync.
 */
export function isAutomatic(header: HeaderValues): boolean {
  const first = (name: Parameters<HeaderValues>[0]) => (header(name)[0] ?? '').trim();
  const autoSubmitted = first('auto-submitted')
    .split(/[;(\s]/)[0]
    .toLowerCase();
  if (autoSubmitted && autoSubmitted !== 'no') return true;
  for (const name of ['x-autoreply', 'x-autorespond'] as const) {
    const v = first(name).toLowerCase();
    if (v && !/^(no|false|0)$/.test(v)) return true;
  }
  if (/^(bulk|junk|list)\b/i.test(first('precedence'))) return true;
  if (header('list-id').some((v) => v.trim()) || header('list-unsubscribe').some((v) => v.trim())) return true;
  const contentType = first('content-type');
  if (/^multipart\/report\s*(;|$)/i.test(contentType) && AUTOMATIC_REPORT_TYPES.has(headerParameter(contentType, 'report-type') ?? '')) return true;
  const from = first('from');
  if (/^(mailer-daemon|postmaster)@/i.test((/<([^<>]*)>\s*$/.exec(from)?.[1] ?? from).trim())) return true;
  return false;
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
  const subject = parsed.subject?.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '').trim() || null;
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
    from: { address: from?.address ?? null, name: from?.name?.trim() || null },
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
  const cleaned = (name ?? '')
    .replace(/[\u0000-\u001f\u007f/\\]/g, '_')
    .trim()
    .slice(0, 255);
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
export async function parseMailWithMailparser(raw: Buffer): Promise<InboundMail> {
  const { simpleParser } = await loadMailparser();
  try {
    return fromParsed(await simpleParser(raw, PARSER_OPTIONS), null);
  } catch (error) {
    return parseHeadersOnly(raw, error instanceof Error ? error.message : String(error));
  }
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
  const libraries = (headerLibraries ??= await loadHeaderLibraries());
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
  const libraries = (headerLibraries ??= await loadHeaderLibraries());
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

interface HeaderLibraries {
  Headers: typeof import('@zone-eu/mailsplit').Headers;
  libmime: typeof import('libmime').default;
  addressparser: typeof import('nodemailer/lib/addressparser')['default'];
  /** The quoted-printable decoder mailsplit decodes body parts with (its own dependency). */
  libqp: { decode(input: Buffer): Buffer };
}

type HeaderLine = { key: string; line: string };

let headerLibraries: HeaderLibraries | undefined;
async function loadHeaderLibraries(): Promise<HeaderLibraries> {
  const [mailsplit, libmime, addressparser] = await Promise.all([import('@zone-eu/mailsplit'), import('libmime'), import('nodemailer/lib/addressparser')]);
  const libqp = createRequire(import.meta.resolve('@zone-eu/mailsplit'))('libqp') as HeaderLibraries['libqp'];
  return { Headers: mailsplit.default.Headers, libmime: libmime.default, addressparser: addressparser.default, libqp };
}

/** The end of a header block as mailsplit finds it: just past the first line that is empty (LF or CRLF). */
function headerBlockEnd(raw: Buffer): number {
  let start = 0;
  while (start < raw.length) {
    const lf = raw.indexOf(0x0a, start);
    if (lf === -1) return raw.length;
    const length = lf + 1 - start;
    if (length === 1 || (length === 2 && raw[start] === 0x0d)) return lf + 1;
    start = lf + 1;
  }
  return raw.length;
}

// An RFC 2047 encoded word (in an address, where none may stand).
const ENCODED_WORD = /[=]\?[^?]+\?[BbQq]\?[^?]*\?[=]/;

/** Display names and addresses as mailparser decodes them (encoded words, punycode domains, groups), in place. */
function decodeAddresses(libmime: HeaderLibraries['libmime'], addresses: EmailAddress[]): void {
  for (const address of addresses) {
    address.name = (address.name || '').toString().trim();
    if (address.name) {
      try {
        address.name = libmime.decodeWords(address.name);
      } catch {
        // kept as it is
      }
    }
    if (address.address && ENCODED_WORD.test(address.address)) {
      try {
        const decoded = libmime.decodeWords(address.address);
        address.address = /^[^\s@]+@[^\s@]+$/.test(decoded) && !/[=]\?/.test(decoded) ? decoded : '';
      } catch {
        address.address = '';
      }
    }
    if (address.address && /@xn--/.test(address.address)) {
      const at = address.address.lastIndexOf('@') + 1;
      const domain = unicodeDomain(address.address.slice(at));
      if (domain !== null) address.address = address.address.slice(0, at) + domain;
    }
    if (address.group) decodeAddresses(libmime, address.group);
  }
}

/** The labels of a domain that are punycode (`xn--`) in Unicode, the others as they are; null when one cannot be decoded. */
function unicodeDomain(domain: string): string | null {
  const labels = domain.split(/[\x2E\u3002\uFF0E\uFF61]/);
  for (let i = 0; i < labels.length; i++) {
    if (!labels[i].startsWith('xn--')) continue;
    const decoded = domainToUnicode(labels[i].toLowerCase());
    if (!decoded) return null;
    labels[i] = decoded;
  }
  return labels.join('.');
}

/** A header block read into the parts of mailparser's answer that fromParsed reads (a body-less mail). */
function parsedHeaders({ Headers, libmime, addressparser }: HeaderLibraries, raw: Buffer, read?: HeaderLine[]): ParsedMail {
  const lines = read ?? new Headers(raw.subarray(0, headerBlockEnd(raw))).getList();
  const headers = new Map<string, unknown>();
  const addresses = (value: string): AddressObject => {
    const list = addressparser(value) as EmailAddress[];
    decodeAddresses(libmime, list);
    return { value: list, html: '', text: '' };
  };
  const decodeWords = (value: string) => {
    try {
      return libmime.decodeWords(value);
    } catch {
      return value;
    }
  };
  const to: AddressObject[] = [];
  const cc: AddressObject[] = [];
  for (const line of lines) {
    const key = line.key;
    // As mailparser: the first occurrence with a value of a single header; every To and Cc.
    if (key === 'to' || key === 'cc') {
      (key === 'to' ? to : cc).push(addresses(headerValue(libmime, line.line)));
      continue;
    }
    if (headers.has(key)) continue;
    const value = headerValue(libmime, line.line);
    switch (key) {
      case 'from':
      case 'reply-to':
        headers.set(key, addresses(value));
        break;
      case 'subject': {
        const subject = decodeWords(value);
        if (subject) headers.set(key, subject);
        break;
      }
      case 'message-id': {
        let id = decodeWords(value);
        if (!id) break;
        if (!id.startsWith('<')) id = `<${id}`;
        if (!id.endsWith('>')) id += '>';
        headers.set(key, id);
        break;
      }
      case 'date':
        headers.set(key, new Date(value));
        break;
    }
  }
  return {
    headerLines: lines,
    headers,
    from: headers.get('from'),
    replyTo: headers.get('reply-to'),
    to: to.length === 0 ? undefined : to.length === 1 ? to[0] : to,
    cc: cc.length === 0 ? undefined : cc.length === 1 ? cc[0] : cc,
    subject: headers.get('subject'),
    messageId: headers.get('message-id'),
    date: headers.get('date'),
    attachments: [],
    html: false,
  } as ParsedMail;
}

/** A header line's unfolded value, its 8-bit bytes read as UTF-8 (as mailparser reads them). */
function headerValue(libmime: HeaderLibraries['libmime'], line: string): string {
  const value = (libmime.decodeHeader(line).value || '').toString().trim();
  return Buffer.from(value, 'binary').toString();
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
