// Reading a header block directly, with the libraries mailparser itself uses (mailsplit's Headers,
// libmime, nodemailer's addressparser), into the parts of mailparser's answer that parse.ts reads.
import { createRequire } from 'node:module';
import { domainToUnicode } from 'node:url';
import type { AddressObject, EmailAddress, ParsedMail } from 'mailparser';

export interface HeaderLibraries {
  Headers: typeof import('@zone-eu/mailsplit').Headers;
  libmime: typeof import('libmime').default;
  addressparser: typeof import('nodemailer/lib/addressparser')['default'];
  /** The quoted-printable decoder mailsplit decodes body parts with (its own dependency). */
  libqp: { decode(input: Buffer): Buffer };
}

export type HeaderLine = { key: string; line: string };

let loaded: Promise<HeaderLibraries> | undefined;
/** The libraries, loaded on first use (as mailparser is). */
export const headerLibraries = () => (loaded ??= loadHeaderLibraries());
async function loadHeaderLibraries(): Promise<HeaderLibraries> {
  const [mailsplit, libmime, addressparser] = await Promise.all([import('@zone-eu/mailsplit'), import('libmime'), import('nodemailer/lib/addressparser')]);
  const libqp = createRequire(import.meta.resolve('@zone-eu/mailsplit'))('libqp') as HeaderLibraries['libqp'];
  return { Headers: mailsplit.default.Headers, libmime: libmime.default, addressparser: addressparser.default, libqp };
}

/** The end of a header block as mailsplit finds it: just past the first line that is empty (LF or CRLF). */
export function headerBlockEnd(raw: Buffer): number {
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
export function parsedHeaders({ Headers, libmime, addressparser }: HeaderLibraries, raw: Buffer, read?: HeaderLine[]): ParsedMail {
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
export function headerValue(libmime: HeaderLibraries['libmime'], line: string): string {
  const value = (libmime.decodeHeader(line).value || '').toString().trim();
  return Buffer.from(value, 'binary').toString();
}
