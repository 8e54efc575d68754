// The ingress handler types: how other features take inbound mail before it becomes a conversation,
// without the mail feature knowing them. Features define handlers; the table that lists them is
// assembled where the server is (src/server/mail-handlers.ts) and handed to the ingress.
import type { Ctx } from '../context.js';
import type { InboundMail } from './parse.js';
import type { MailTarget } from './recipients.js';

/** Addresses that belong to a feature rather than to a channel (broadcast return paths). */
export interface RecipientHandler {
  name: string;
  /** The addresses among `addresses` that are this handler's (the SMTP ingress accepts them at RCPT). */
  claim(ctx: Ctx, addresses: readonly string[]): Promise<string[]>;
  /** Takes the raw message sent to its claimed addresses; nothing of it is stored as a conversation. */
  receive(ctx: Ctx, raw: Buffer, addresses: string[]): Promise<void>;
}

/** Parsed mail for channels that a feature takes before it is stored (a migration's test message). */
export interface MessageHandler {
  name: string;
  /** Takes what is its own and returns the targets that still receive the mail as a conversation. */
  take(ctx: Ctx, mail: InboundMail, targets: MailTarget[]): Promise<MailTarget[]>;
}

/** In order: recipient handlers claim addresses first; message handlers run one after another. */
export interface MailHandlers {
  recipients: readonly RecipientHandler[];
  messages: readonly MessageHandler[];
}

/** Splits addresses into each recipient handler's claims (first claim wins) and the rest. */
export async function claimRecipients(
  ctx: Ctx,
  handlers: MailHandlers,
  addresses: readonly string[],
): Promise<{ claimed: Map<RecipientHandler, string[]>; others: string[] }> {
  const claimed = new Map<RecipientHandler, string[]>();
  let others = [...addresses];
  for (const handler of handlers.recipients) {
    if (!others.length) break;
    const mine = await handler.claim(ctx, others);
    if (!mine.length) continue;
    claimed.set(handler, mine);
    const taken = new Set(mine);
    others = others.filter((a) => !taken.has(a));
  }
  return { claimed, others };
}

/** Which recipient handler owns one address (the SMTP ingress asks at RCPT). */
export async function recipientHandlerOf(ctx: Ctx, handlers: MailHandlers, address: string): Promise<RecipientHandler | undefined> {
  for (const handler of handlers.recipients) if ((await handler.claim(ctx, [address])).length) return handler;
  return undefined;
}

/** Lets every message handler take its part; returns the targets left for storing. */
export async function offerMessage(ctx: Ctx, handlers: MailHandlers, mail: InboundMail, targets: MailTarget[]): Promise<MailTarget[]> {
  let remaining = targets;
  for (const handler of handlers.messages) remaining = await handler.take(ctx, mail, remaining);
  return remaining;
}
