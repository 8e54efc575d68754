// Forwarding addresses: with SVC_FORWARDING_DOMAIN set, every e-mail channel has a random address
// on that domain that mail can be forwarded to. Rotating issues a new one; the old address stops
// receiving at once (550 at RCPT, like any unknown address), so a leaked address can be cut off.
// Without the setting, no address is shown or accepted (stored ones come back when it is set).
import type { Access } from '../auth/access.js';
import { authorize } from '../auth/access.js';
import { type ChannelRow, getChannel, newForwardingAddress } from '../channels/service.js';
import { channelsWithoutForwardingOn, setForwardingAddress } from '../channels/store.js';
import type { Ctx } from '../context.js';
import { announceEvents, recordSignal } from '../events/service.js';
import { iso } from '../platform/clock.js';
import { conflict, invalid } from '../platform/errors.js';

export async function rotateForwardingAddress(ctx: Ctx, access: Access, channelId: string): Promise<ChannelRow> {
  // The spec lists this route among the migration endpoints, so the migration rule decides who may.
  authorize(access, 'migrations:manage');
  const channel = await getChannel(ctx, access.workspaceId, channelId);
  if (channel.kind !== 'email') throw invalid('only e-mail channels have forwarding addresses');
  const domain = ctx.config.forwardingDomain;
  if (!domain) throw conflict('this server has no forwarding domain (SVC_FORWARDING_DOMAIN is not set)', 'forwarding_not_configured');
  const address = newForwardingAddress(domain);
  const now = iso(ctx.clock.now());
  await ctx.db.transaction().execute(async (trx) => {
    await setForwardingAddress(trx, channel.id, address, now);
    await recordSignal({ db: trx, clock: ctx.clock }, 'channel.saved', { channelId: channel.id });
  });
  announceEvents(ctx);
  return { ...channel, forwarding_address: address, updated_at: now };
}

/** At start: every e-mail channel gets an address on the current forwarding domain. */
export async function assignForwardingAddresses(ctx: Pick<Ctx, 'db' | 'clock' | 'config' | 'log'>): Promise<number> {
  const domain = ctx.config.forwardingDomain;
  if (!domain) return 0;
  const rows = await channelsWithoutForwardingOn(ctx.db, domain);
  for (const row of rows) await setForwardingAddress(ctx.db, row.id, newForwardingAddress(domain), iso(ctx.clock.now()));
  if (rows.length) ctx.log.info('forwarding addresses assigned', { channels: rows.length, domain });
  return rows.length;
}
