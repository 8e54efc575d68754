// Unusual but real mail that mailparser cannot split on its own, so that the customer's words are
// never lost: an old mailer's `Content-Type: text` (no subtype, RFC 1049's form), a multipart whose
// boundary is missing or not the one its parts use, a message that *is* a forwarded message
// (top-level message/rfc822), and as a last resort the decoded raw text of a body that yielded none.
import { headerParameter } from './automatic.js';
import { headerBlockEnd, headerLibraries } from './header-block.js';

/** `Content-Type: text` with no subtype, on a header line of the message or of a part. */
const TEXT_WITHOUT_SUBTYPE = /^(content-type:[ \t]*)text([ \t]*(?:;|\r?\n))/gim;

/** The unfolded value of the first `name` header of a header block (latin1 text). */
function headerOf(block: string, name: string): { value: string; start: number; end: number } | null {
  const re = new RegExp(`^${name}:[ \\t]*((?:.*)(?:\\r?\\n[ \\t].*)*)\\r?\\n`, 'im');
  const m = re.exec(block);
  return m ? { value: m[1].replace(/\r?\n[ \t]+/g, ' ').trim(), start: m.index, end: m.index + m[0].length } : null;
}

/** The first line of the body that opens a MIME part (`--token`), when the declared boundary opens none. */
function boundaryInUse(body: string): string | null {
  const m = /^--([^\s]{1,200}?)[ \t]*\r?$/m.exec(body);
  if (!m) return null;
  const token = m[1].endsWith('--') ? m[1].slice(0, -2) : m[1];
  return token || null;
}

/**
 * The message with the shapes mailparser cannot split put right, or the same buffer when it has
 * none: `text` becomes `text/plain`; a top-level multipart without a boundary, or whose boundary
 * opens no part, gets the boundary its parts do use.
 */
export function repairMime(raw: Buffer): Buffer {
  const text = raw.toString('latin1');
  let out = text.replace(TEXT_WITHOUT_SUBTYPE, '$1text/plain$2');
  // latin1 maps bytes to characters one to one: unchanged text is the raw bytes (no copy to make).
  const end = headerBlockEnd(out === text ? raw : Buffer.from(out, 'latin1'));
  const block = out.slice(0, end);
  const type = headerOf(block, 'content-type');
  if (type && /^multipart\/[a-z0-9.+-]+\s*(;|$)/i.test(type.value)) {
    const body = out.slice(end);
    const declared = /;\s*boundary\s*=\s*(?:"([^"]*)"|([^\s;]+))/i.exec(type.value);
    const boundary = declared ? (declared[1] ?? declared[2]) : null;
    const opens = boundary !== null && boundary !== '' && new RegExp(`^--${escapeRegExp(boundary)}[ \\t]*\\r?$`, 'm').test(body);
    const used = opens ? null : boundaryInUse(body);
    if (used) {
      const params = type.value
        .split(';')
        .slice(1)
        .map((p) => p.trim())
        .filter((p) => p && !/^boundary\s*=/i.test(p));
      const line = `Content-Type: ${[type.value.split(';')[0].trim(), ...params, `boundary="${used}"`].join('; ')}\r\n`;
      out = block.slice(0, type.start) + line + block.slice(type.end) + body;
    }
  }
  return out === text ? raw : Buffer.from(out, 'latin1');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Whether a header block says the message is itself a message (message/rfc822, as GroupWise and "forward as attachment" send). */
export function isEnclosedMessage(contentType: string | undefined): boolean {
  return /^message\/(rfc822|global)\s*(;|$)/i.test((contentType ?? '').trim());
}

/** The enclosed message's headers as a reader of a forward sees them, above its text. */
export function forwardedSummary(inner: {
  from: { address: string | null; name: string | null };
  date: Date | null;
  subject: string | null;
  to: { name: string | null; address: string }[];
}): string {
  const who = (a: { name: string | null; address: string | null }) => (a.name && a.address ? `${a.name} <${a.address}>` : (a.address ?? a.name ?? ''));
  const lines = ['---------- Forwarded message ----------'];
  if (inner.from.address || inner.from.name) lines.push(`From: ${who(inner.from)}`);
  if (inner.date) lines.push(`Date: ${inner.date.toUTCString()}`);
  if (inner.subject) lines.push(`Subject: ${inner.subject}`);
  if (inner.to.length) lines.push(`To: ${inner.to.map(who).join(', ')}`);
  return lines.join('\n');
}

/** A file name for a message kept as an attachment: its subject, made safe, and `.eml`. */
export function emlName(subject: string | null, index: number): string {
  const base = (subject ?? '')
    .replace(/[\u0000-\u001f\u007f/\\:*?"<>|]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 100);
  return `${base || `message-${index + 1}`}.eml`;
}

/**
 * The last resort for a body that gave no text, HTML or file: its raw text, decoded by the
 * message's transfer encoding and charset (UTF-8 when it names none or one that cannot be read;
 * Latin-1 when the bytes are not UTF-8). Empty when the body is only white space.
 */
export async function rawBodyText(raw: Buffer): Promise<string> {
  const end = headerBlockEnd(raw);
  const block = raw.subarray(0, end).toString('latin1');
  let body = raw.subarray(end);
  const encoding = (headerOf(block, 'content-transfer-encoding')?.value ?? '').toLowerCase();
  if (encoding === 'base64') body = Buffer.from(body.toString('latin1').replace(/[^A-Za-z0-9+/=]/g, ''), 'base64');
  else if (encoding === 'quoted-printable') body = (await headerLibraries()).libqp.decode(body);
  const charset = headerParameter(headerOf(block, 'content-type')?.value ?? '', 'charset');
  let text: string;
  try {
    text = new TextDecoder(charset ?? 'utf-8', { fatal: !charset }).decode(body);
  } catch {
    text = charset ? new TextDecoder('utf-8').decode(body) : body.toString('latin1');
  }
  text = text
    .replace(/\u0000/g, '')
    .replace(/\r\n?/g, '\n')
    .trim();
  return text;
}
