// What forwards and new conversations share with replies (issue 33): the team's text as it is stored
// and mailed, the recipients named by the team (each checked, at most MAX_RECIPIENTS in all, never
// the team's own addresses) and the e-mail channel that sends them.

import { type ChannelRow, findChannel, firstChannelOfInbox } from '../channels/store.js';
import type { Db } from '../db/schema.js';
import { plainFromHtml } from '../mail/plain-text.js';
import { parseRecipient, type Recipient, type Recipients, teamAddresses } from '../mail/reply-recipients.js';
import { sanitizeMailHtml } from '../mail/sanitize.js';
import { hasSmtpAccount } from '../mail/transport.js';
import { conflict, invalid } from '../platform/errors.js';
import { charCount } from '../platform/text.js';
import { MAX_API_BODY_CHARS } from './messages.js';
import { MAX_RECIPIENTS } from './participants.js';

export const fieldError = (path: string, message: string) => invalid(`${path}: ${message}`, { issues: [{ path, message }] });

/** The team's text: sanitized html with its plain text made from it, or plain text alone. */
export function teamText(input: { body?: string; html?: string }, opts: { required: boolean }): { body: string; html: string | null } {
  const html = input.html ? sanitizeMailHtml(input.html) : null;
  const body = html !== null ? plainFromHtml(html) : (input.body ?? '');
  const hasImage = html !== null && /<img\s/i.test(html);
  if (opts.required && !body.trim() && !hasImage) throw fieldError(input.html ? 'html' : 'body', 'must not be empty');
  if (charCount(body) > MAX_API_BODY_CHARS) throw fieldError('body', `at most ${MAX_API_BODY_CHARS} characters`);
  return { body, html };
}

export interface RawRecipients {
  to: readonly string[];
  cc?: readonly string[];
  bcc?: readonly string[];
}

/**
 * The recipients exactly as named (no reply-all defaults): To at least one address; an address in To
 * is not repeated in Cc or Bcc, nor one in Cc in Bcc. `resolve` turns an entry that is not an address
 * (a contact id) into one. 400 naming the field otherwise.
 */
export async function namedRecipients(
  db: Db,
  workspaceId: string,
  raw: RawRecipients,
  resolve?: (entry: string, path: string) => Promise<Recipient | undefined>,
): Promise<Recipients> {
  const total = raw.to.length + (raw.cc?.length ?? 0) + (raw.bcc?.length ?? 0);
  const last = raw.bcc?.length ? 'bcc' : raw.cc?.length ? 'cc' : 'to';
  if (total > MAX_RECIPIENTS) throw fieldError(last, `at most ${MAX_RECIPIENTS} recipients in to, cc and bcc together`);
  if (raw.to.length === 0) throw fieldError('to', 'name at least one address');
  const team = await teamAddresses(db, workspaceId);
  const seen = new Set<string>();
  const out: Recipients = { to: [], cc: [], bcc: [] };
  for (const field of ['to', 'cc', 'bcc'] as const) {
    const list = raw[field] ?? [];
    for (let i = 0; i < list.length; i++) {
      const path = `${field}.${i}`;
      const r = (resolve && (await resolve(list[i], path))) || parseRecipient(list[i], path);
      if (team.has(r.address.toLowerCase())) throw fieldError(path, `${r.address} is one of the team’s own addresses`);
      if (seen.has(r.address)) continue;
      seen.add(r.address);
      out[field].push(r);
    }
  }
  return out;
}

/**
 * The e-mail channel that sends for a conversation or an inbox: the conversation's own when it is
 * e-mail, else the inbox's first e-mail channel (a chat can be forwarded by mail). 409 when the inbox
 * has none, or it has no SMTP account.
 */
export async function sendingChannel(db: Db, input: { inboxId: string; channelId?: string | null }): Promise<ChannelRow> {
  const own = input.channelId ? await findChannel(db, input.channelId) : undefined;
  const channel = own?.kind === 'email' ? own : await firstChannelOfInbox(db, input.inboxId, 'email');
  if (!channel) throw conflict('this inbox has no e-mail channel to send through', 'no_email_channel');
  return checkSmtp(channel);
}

export function checkSmtp(channel: ChannelRow): ChannelRow {
  if (!hasSmtpAccount(channel))
    throw conflict(`channel ${channel.id} has no SMTP account; set its SMTP server, user name and password first`, 'smtp_not_configured');
  return channel;
}
