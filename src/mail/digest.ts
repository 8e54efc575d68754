// What makes two copies of a mail the same message (src/mail/duplicates.ts stores each once).
import { hash } from 'node:crypto';

export const normaliseText = (text: string) =>
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
  return digestOf(m.messageId ?? '', m.date ? m.date.toISOString() : '', identityParts(m));
}

/** From, To, Subject and body as the digest reads them (the same with or without the Date). */
function identityParts(m: Parameters<typeof mailDigest>[0]): string[] {
  return [
    (m.from ?? '').trim().toLowerCase(),
    [...new Set(m.to.map((a) => a.trim().toLowerCase()))].sort().join(','),
    (m.subject ?? '').replace(/\s+/g, ' ').trim(),
    ...m.body,
  ];
}

/**
 * SHA-256 of the parts, each with its length in front, so that no two different lists of parts hash
 * alike. One string hashed at once (crypto.hash): the same bytes as an update per part (a part is
 * always preceded by its ASCII length, so no surrogate pairs up across parts), without a Hash object
 * and two updates per part (~15 µs a digest, two digests a mail, on the copy's main thread).
 */
function digestOf(messageId: string, date: string, rest: readonly string[]): string {
  let text = `${Buffer.byteLength(messageId)}:${messageId}${Buffer.byteLength(date)}:${date}`;
  for (const part of rest) text += `${Buffer.byteLength(part)}:${part}`;
  return hash('sha256', text);
}

/**
 * The digest of a received mail, and the one it had before (see InboundMail.priorDigest). With a
 * Message-ID, the Date does not count: a mail re-sent with a new Date (same Message-ID, sender,
 * recipients, subject and body) is the same message. Without one, the Date tells mails apart.
 */
export function mailDigests(m: Parameters<typeof mailDigest>[0]): { digest: string; priorDigest: string | null } {
  const rest = identityParts(m);
  const prior = digestOf(m.messageId ?? '', m.date ? m.date.toISOString() : '', rest);
  if (!m.messageId || !m.date) return { digest: prior, priorDigest: null };
  return { digest: digestOf(m.messageId, '', rest), priorDigest: prior };
}
