// Delivery-status reports (RFC 3464) and feedback reports (ARF, RFC 5965) that come back to the
// SMTP ingress for broadcast mail sent through channels other than Amazon SES. They arrive at the
// VERP return path of the mail (links.ts), which names the recipient; the returned headers (our
// Message-ID and X-Svc-Broadcast) identify it too.

import type { Ctx } from '../context.js';
import type { RecipientHandler } from '../mail/handlers.js';
import { loadMailparser } from '../mail/parse.js';
import { recordFeedback } from './feedback.js';
import { linkKey, tokenOfReturnPath } from './links.js';

export type ReportKind = 'permanent_bounce' | 'transient' | 'complaint' | 'none';

export interface ReadReport {
  kind: ReportKind;
  /** Returned headers of the original message (where our token is). */
  returned: string[];
}

/** Header-style fields of a delivery-status part, one record per blank-line separated block. */
export function reportFields(text: string): Record<string, string>[] {
  const blocks: Record<string, string>[] = [];
  let current: Record<string, string> = {};
  let last: string | undefined;
  for (const line of text.replace(/\r\n/g, '\n').split('\n')) {
    if (line.trim() === '') {
      if (Object.keys(current).length) blocks.push(current);
      current = {};
      last = undefined;
    } else if (/^[ \t]/.test(line) && last) {
      current[last] += ' ' + line.trim();
    } else {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      last = line.slice(0, colon).trim().toLowerCase();
      current[last] = line.slice(colon + 1).trim();
    }
  }
  if (Object.keys(current).length) blocks.push(current);
  return blocks;
}

export async function readReport(raw: Buffer): Promise<ReadReport> {
  const { simpleParser } = await loadMailparser();
  const parsed = await simpleParser(raw, { keepDeliveryStatus: true, skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true, maxChildNodes: 50 });
  const returned: string[] = [];
  let kind: ReportKind = 'none';
  for (const a of parsed.attachments) {
    const type = a.contentType.toLowerCase();
    if (type === 'message/delivery-status' || type === 'message/global-delivery-status') {
      const recipients = reportFields(a.content.toString('utf8')).slice(1);
      for (const r of recipients) {
        const action = (r['action'] ?? '').toLowerCase();
        const status = r['status'] ?? '';
        if (action === 'failed' && /^5\./.test(status)) kind = 'permanent_bounce';
        else if (kind === 'none' && (action === 'delayed' || action === 'failed')) kind = 'transient';
      }
    } else if (type === 'message/feedback-report') {
      const fields = reportFields(a.content.toString('utf8'))[0] ?? {};
      if ((fields['feedback-type'] ?? '').toLowerCase() !== 'not-spam') kind = 'complaint';
    } else if (
      type === 'text/rfc822-headers' ||
      type === 'message/rfc822' ||
      type === 'message/rfc822-headers' ||
      type === 'message/global' ||
      type === 'message/global-headers'
    ) {
      returned.push(a.content.toString('utf8').slice(0, 64 * 1024));
    }
  }
  return { kind, returned };
}

/** VERP return paths among the addresses (with their recipient), and the other addresses. */
async function splitReturnPaths(
  ctx: Pick<Ctx, 'db' | 'sealer' | 'config'>,
  addresses: readonly string[],
): Promise<{ returnPaths: string[]; others: string[] }> {
  const returnPaths: string[] = [];
  const others: string[] = [];
  if (!addresses.length) return { returnPaths, others };
  const key = await linkKey(ctx);
  for (const a of addresses) (tokenOfReturnPath(ctx, key, a) ? returnPaths : others).push(a);
  return { returnPaths, others };
}

/**
 * Mail that came back to return paths: a permanent bounce or a complaint is recorded for the
 * recipient; transient reports, auto-replies and anything unreadable are dropped (and accepted,
 * so the reporting server does not report its report).
 */
export async function processReturnedMail(ctx: Ctx, raw: Buffer, returnPaths: string[]): Promise<ReportKind> {
  let report: ReadReport;
  try {
    report = await readReport(raw);
  } catch (error) {
    ctx.log.debug('returned mail unreadable', { error });
    return 'none';
  }
  if (report.kind === 'permanent_bounce' || report.kind === 'complaint') {
    for (const address of returnPaths)
      await recordFeedback(ctx, report.kind === 'complaint' ? 'complaint' : 'bounce', { texts: [address, ...report.returned] });
  } else {
    ctx.log.debug('returned mail without a permanent failure', { kind: report.kind });
  }
  return report.kind;
}

/** The ingress's recipient handler for VERP return paths: reports coming back are feedback, not conversations. */
export const returnPathRecipients: RecipientHandler = {
  name: 'broadcast-return-paths',
  claim: async (ctx, addresses) => (await splitReturnPaths(ctx, addresses)).returnPaths,
  receive: async (ctx, raw, addresses) => {
    await processReturnedMail(ctx, raw, addresses);
  },
};
