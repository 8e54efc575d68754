// Where a reply goes (issue 33). Without recipients named, a reply goes to all participants as a mail
// client's reply-all does: To the customer (the contact) at the Reply-To of its newest mail, Cc the
// other participants. Named `to`/`cc`/`bcc` replace that field of the default. The team's own addresses
// (channel, forwarding and member addresses) are never a recipient nor a participant.

import { channelAddresses } from '../channels/service.js';
import type { ChannelRow } from '../channels/store.js';
import { contactIdsMergedInto } from '../contacts/merged.js';
import { checkName, normalizeAddress } from '../contacts/service.js';
import { loadContactView } from '../contacts/store.js';
import type { ConversationRow } from '../conversations/format.js';
import { MAX_RECIPIENTS, type Participant, participantsOf, withParticipants } from '../conversations/participants.js';
import { latestInboundMail } from '../conversations/store.js';
import type { Db, MailHeaders } from '../db/schema.js';
import { cachedReactionSetting } from '../events/settings-cache.js';
import { memberIdsOf } from '../members/store.js';
import { peopleByIds } from '../people/store.js';
import { invalid } from '../platform/errors.js';
import type { InboundMail } from './parse.js';

export interface Recipient {
  name: string | null;
  address: string;
}

export interface Recipients {
  to: Recipient[];
  cc: Recipient[];
  bcc: Recipient[];
}

export type RecipientField = 'to' | 'cc' | 'bcc';

/** Raw recipients as the API takes them: `"Name <addr>"` or `addr`. */
export interface NamedRecipients {
  to?: readonly string[];
  cc?: readonly string[];
  bcc?: readonly string[];
}

const fieldError = (path: string, message: string) => invalid(`${path}: ${message}`, { issues: [{ path, message }] });

/** `Name <addr>`, `"Name" <addr>` or `addr`; the address checked and normalised (lower case). */
export function parseRecipient(raw: string, path: string): Recipient {
  const text = raw.trim();
  const angled = /^(.*)<([^<>]*)>$/s.exec(text);
  const rawName = angled
    ? angled[1]
        .trim()
        .replace(/^"(.*)"$/s, '$1')
        .replace(/\\(.)/g, '$1')
    : '';
  const rawAddress = angled ? angled[2] : text;
  let address: string;
  try {
    address = normalizeAddress(rawAddress);
  } catch {
    throw fieldError(path, `not an e-mail address: ${JSON.stringify(raw.slice(0, 100))}`);
  }
  return { name: checkName(rawName), address };
}

function parseList(list: readonly string[] | undefined, field: RecipientField): Recipient[] | undefined {
  if (list === undefined) return undefined;
  const out: Recipient[] = [];
  list.forEach((raw, i) => {
    const r = parseRecipient(raw, `${field}.${i}`);
    if (!out.some((o) => o.address === r.address)) out.push(r);
  });
  return out;
}

/** Every address of the team (lower case): channel, forwarding and from addresses, and members' addresses. */
export async function teamAddresses(db: Db, workspaceId: string): Promise<Set<string>> {
  const members = await peopleByIds(db, await memberIdsOf(db, workspaceId));
  return new Set([...(await channelAddresses(db, workspaceId)), ...[...members.values()].map((p) => p.email.toLowerCase())]);
}

const key = (a: string) => a.toLowerCase();

/**
 * The inbound mail that says where a reply goes: the newest from the contact (or a contact merged
 * into it). Mail from a thread joiner or another participant does not move To: they are Cc.
 */
async function lastWriter(db: Db, conversation: ConversationRow) {
  const contactIds = new Set(await contactIdsMergedInto(db, conversation.contact_id));
  for (const r of await latestInboundMail(db, conversation.id, 200)) {
    if (r.author_contact_id && contactIds.has(r.author_contact_id)) {
      return { replyTo: r.mail_reply_to!, from: r.mail_headers ? (JSON.parse(r.mail_headers) as MailHeaders).from : null };
    }
  }
  return undefined;
}

/** The reply-all recipients of a conversation (To and Cc), without the team's addresses. */
export async function defaultReplyRecipients(db: Db, conversation: ConversationRow, team?: Set<string>): Promise<{ to: Recipient[]; cc: Recipient[] }> {
  const own = team ?? (await teamAddresses(db, conversation.workspace_id));
  const participants = participantsOf(conversation) ?? [];
  const contact = await loadContactView(db, conversation.workspace_id, conversation.contact_id);
  const writer = await lastWriter(db, conversation);
  const address = writer?.replyTo ?? contact?.emails[0];
  const to: Recipient[] = [];
  if (address && !own.has(key(address))) {
    const named = participants.find((p) => key(p.address) === key(address))?.name;
    const fromName = writer?.from && key(writer.from.address) === key(address) ? writer.from.name : null;
    const contactName = contact?.emails.some((e) => key(e) === key(address)) ? contact.contact.name?.trim() || null : null;
    to.push({ name: named ?? fromName ?? contactName, address });
  }
  // The writer is answered at its Reply-To alone, as a mail client's reply-all does.
  const answered = new Set([address, writer?.from?.address].filter((a) => a).map((a) => key(a!)));
  const cc = participants.filter((p) => !own.has(key(p.address)) && !answered.has(key(p.address))).map((p) => ({ name: p.name, address: p.address }));
  // Nobody to answer but participants (the writer was one of the team): the first one is To.
  if (to.length === 0 && cc.length) to.push(cc.shift()!);
  return { to, cc };
}

/**
 * The recipients of a reply: each named field replaces the default's (Bcc is empty by default).
 * 400 naming the field for an invalid address, one of the team's addresses, an empty To or more
 * than MAX_RECIPIENTS in all.
 */
export async function replyRecipients(db: Db, conversation: ConversationRow, named: NamedRecipients): Promise<Recipients> {
  const parsed = { to: parseList(named.to, 'to'), cc: parseList(named.cc, 'cc'), bcc: parseList(named.bcc, 'bcc') };
  const given = (['to', 'cc', 'bcc'] as const).filter((f) => parsed[f] !== undefined);
  const total = given.reduce((n, f) => n + parsed[f]!.length, 0);
  if (total > MAX_RECIPIENTS) throw fieldError(given[given.length - 1], `at most ${MAX_RECIPIENTS} recipients in to, cc and bcc together`);
  const team = await teamAddresses(db, conversation.workspace_id);
  for (const f of given) {
    parsed[f]!.forEach((r, i) => {
      if (team.has(key(r.address))) throw fieldError(`${f}.${i}`, `${r.address} is one of the team’s own addresses`);
    });
  }
  const defaults = parsed.to && parsed.cc ? { to: [], cc: [] } : await defaultReplyRecipients(db, conversation, team);
  const out: Recipients = { to: parsed.to ?? defaults.to, cc: parsed.cc ?? defaults.cc, bcc: parsed.bcc ?? [] };
  if (named.to !== undefined && out.to.length === 0) throw fieldError('to', 'name at least one address');
  // An address in To is not repeated in Cc or Bcc, nor one in Cc in Bcc.
  const seen = new Set(out.to.map((r) => r.address.toLowerCase()));
  out.cc = out.cc.filter((r) => !seen.has(key(r.address)) && (seen.add(key(r.address)), true));
  out.bcc = out.bcc.filter((r) => !seen.has(key(r.address)) && (seen.add(key(r.address)), true));
  const all = out.to.length + out.cc.length + out.bcc.length;
  if (all > MAX_RECIPIENTS) throw fieldError(given.length ? given[given.length - 1] : 'to', `at most ${MAX_RECIPIENTS} recipients in to, cc and bcc together`);
  return out;
}

/** Participants as the API takes them (PATCH): checked, without duplicates, never the team's. */
export async function checkParticipants(db: Db, workspaceId: string, list: readonly { name?: string | null; address: string; role: 'to' | 'cc' }[]) {
  if (list.length > MAX_RECIPIENTS) throw fieldError('participants', `at most ${MAX_RECIPIENTS} participants`);
  const team = await teamAddresses(db, workspaceId);
  const out: Participant[] = [];
  list.forEach((p, i) => {
    const r = parseRecipient(p.address, `participants.${i}.address`);
    if (team.has(r.address)) throw fieldError(`participants.${i}.address`, `${r.address} is one of the team’s own addresses`);
    if (!out.some((o) => o.address === r.address)) out.push({ name: checkName(p.name ?? r.name), address: r.address, role: p.role });
  });
  return out;
}

/**
 * The participants after an inbound mail, or undefined when they stay as they are. A new
 * conversation starts with the sender (To); mail from the contact or a participant adds the new
 * outside addresses of its To and Cc (as Cc) unless it is automatic; a thread joiner's mail adds
 * nothing (the panel offers to add its sender).
 */
export async function participantsAfterInbound(
  db: Db,
  input: {
    conversation: ConversationRow;
    created: boolean;
    fromContact: boolean;
    sender: string | null;
    mail: Pick<InboundMail, 'from' | 'to' | 'cc' | 'automatic'>;
    channel: Pick<ChannelRow, 'address' | 'from_address' | 'forwarding_address'>;
  },
): Promise<Participant[] | undefined> {
  const current = participantsOf(input.conversation);
  const list = current ?? [];
  const sender = input.sender;
  const isParticipant = sender !== null && list.some((p) => key(p.address) === sender);
  if (!input.created && !input.fromContact && !isParticipant) return undefined;
  const channelOwn = new Set([input.channel.address, input.channel.from_address, input.channel.forwarding_address].filter((a) => a).map((a) => key(a!)));
  const candidates: Participant[] = [];
  const listed = (address: string) => list.some((p) => key(p.address) === address) || candidates.some((c) => c.address === address);
  if (sender && !channelOwn.has(sender) && !listed(sender)) candidates.push({ name: checkName(input.mail.from.name), address: sender, role: 'to' });
  if (!input.mail.automatic) {
    for (const a of [...input.mail.to, ...input.mail.cc]) {
      let address: string;
      try {
        address = normalizeAddress(a.address);
      } catch {
        continue;
      }
      if (address === sender || channelOwn.has(address) || listed(address)) continue;
      candidates.push({ name: checkName(a.name), address, role: 'cc' });
    }
  }
  if (candidates.length === 0) return undefined;
  // The sender may be one of the team (a member writing in): never a participant, nor are its other addresses.
  // Cached while the reaction settings epoch holds (its triggers cover memberships, people's addresses
  // and channels: migration 0066): a mail's transaction changes none of them.
  const workspaceId = input.conversation.workspace_id;
  const team = await cachedReactionSetting(db, `team-addresses:${workspaceId}`, () => teamAddresses(db, workspaceId));
  const next = withParticipants(
    list,
    candidates.filter((c) => !team.has(c.address)),
  );
  if (current ? JSON.stringify(next) === JSON.stringify(current) : next.length === 0) return undefined;
  return next;
}
