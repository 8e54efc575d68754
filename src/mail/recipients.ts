// Which e-mail channel an address belongs to: its own address, or its forwarding address while the
// server has SVC_FORWARDING_DOMAIN. Channels of deleted workspaces receive nothing (550).

import { type ChannelRow, emailChannelForAddress } from '../channels/store.js';
import { normalizeAddress } from '../contacts/service.js';
import type { Ctx } from '../context.js';

export interface MailTarget {
  channel: ChannelRow;
  workspaceId: string;
  inboxId: string;
  via: 'address' | 'forwarding';
}

export function isForwardingAddress(config: Pick<Ctx['config'], 'forwardingDomain'>, address: string): boolean {
  return !!config.forwardingDomain && address.endsWith(`@${config.forwardingDomain}`);
}

export async function resolveRecipient(ctx: Pick<Ctx, 'db' | 'config'>, raw: string): Promise<MailTarget | undefined> {
  let address: string;
  try {
    address = normalizeAddress(raw);
  } catch {
    return undefined;
  }
  const forwarding = isForwardingAddress(ctx.config, address);
  const channel = await emailChannelForAddress(ctx.db, address, { forwarding });
  if (!channel) return undefined;
  return { channel, workspaceId: channel.workspace_id, inboxId: channel.inbox_id, via: channel.address === address ? 'address' : 'forwarding' };
}

/** Distinct inboxes the addresses reach (mail to a channel's address and its forwarding address is one delivery). */
export async function resolveRecipients(ctx: Pick<Ctx, 'db' | 'config'>, addresses: readonly string[]): Promise<MailTarget[]> {
  const out = new Map<string, MailTarget>();
  for (const a of addresses) {
    const t = await resolveRecipient(ctx, a);
    if (t && !out.has(t.inboxId)) out.set(t.inboxId, t);
  }
  return [...out.values()];
}
