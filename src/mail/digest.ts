// What makes two copies of a mail the same message (src/mail/duplicates.ts stores each once).
import { createHash } from 'node:crypto';

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
export function mailDigests(m: Parameters<typeof mailDigest>[0]): { digest: string; priorDigest: string | null } {
  const prior = mailDigest(m);
  if (!m.messageId || !m.date) return { digest: prior, priorDigest: null };
  return { digest: mailDigest({ ...m, date: null }), priorDigest: prior };
}
