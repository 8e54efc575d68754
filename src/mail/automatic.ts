// Automatic mail (auto-replies, delivery reports, lists): the one rule for ingress, the migration scan and sync.

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
export function headerParameter(value: string, name: string): string | null {
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
