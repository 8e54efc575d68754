// A revoked grant, as the team sees it: the workspace's managers (owners and admins who see the
// inbox) are told once per revocation, by whichever finds it first: the first reply or rating
// request it fails (`conversation.sign_in_required`, with that conversation), the mailbox reader or
// a broadcast it paused (`channel.sign_in_required`, about the channel: no conversation has
// anything failed yet, but mail stops arriving or a broadcast waits). The notifications feature
// tells them (trigger sign_in_required); a new sign-in clears told_at and sends again what it
// failed (the retry job).

import type { ChannelRow } from '../channels/service.js';
import { findChannel } from '../channels/store.js';
import { formatConversation } from '../conversations/format.js';
import { conversationById, labelsOf } from '../conversations/store.js';
import type { Db } from '../db/schema.js';
import { recordEvent } from '../events/service.js';
import { type Clock, iso } from '../platform/clock.js';
import { providerName } from './grants.js';

type Tx = { db: Db; clock: Clock };

/** What the managers are told: the channel, the provider and its words. */
type SignInRequired = {
  channel_id: string;
  channel_name: string;
  inbox_id: string;
  provider: 'google' | 'microsoft';
  provider_name: string;
  account: string;
  error: string | null;
  /** What stopped: sending replies or reading the mailbox. */
  stopped: 'sending' | 'reading';
};

/**
 * The once-per-revocation guard (told_at): the first caller after the grant turned revoked gets
 * what to tell; every later one (either path) gets undefined.
 */
async function claimTelling(tx: Tx, channelId: string, stopped: SignInRequired['stopped']): Promise<{ channel: ChannelRow; told: SignInRequired } | undefined> {
  const res = await tx.db
    .updateTable('channel_grants')
    .set({ told_at: iso(tx.clock.now()) })
    .where('channel_id', '=', channelId)
    .where('state', '=', 'revoked')
    .where('told_at', 'is', null)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) !== 1) return undefined;
  const [grant, channel] = await Promise.all([
    tx.db.selectFrom('channel_grants').select(['provider', 'account', 'error']).where('channel_id', '=', channelId).executeTakeFirstOrThrow(),
    findChannel(tx.db, channelId),
  ]);
  if (!channel) return undefined;
  return {
    channel,
    told: {
      channel_id: channel.id,
      channel_name: channel.name,
      inbox_id: channel.inbox_id,
      provider: grant.provider,
      provider_name: providerName(grant.provider),
      account: grant.account,
      error: grant.error,
      stopped,
    },
  };
}

/**
 * In the transaction that marks a reply failed by a refused sign-in: the first such failure after
 * the revocation (unless the reader told already) records the event that tells the managers.
 */
export async function tellSignInRequired(tx: Tx, error: { channelId: string }, conversationId: string): Promise<void> {
  const claimed = await claimTelling(tx, error.channelId, 'sending');
  if (!claimed) return;
  const conversation = await conversationById(tx.db, conversationId);
  if (!conversation) return;
  const labels = (await labelsOf(tx.db, [conversation.id])).get(conversation.id) ?? [];
  await recordEvent(tx, {
    workspaceId: conversation.workspace_id,
    inboxId: conversation.inbox_id,
    contactId: conversation.contact_id,
    type: 'conversation.sign_in_required',
    occurredAt: tx.clock.now(),
    webhook: false,
    data: { conversation: formatConversation(conversation, labels), sign_in_required: claimed.told },
  });
}

/**
 * The mailbox reader (src/mailbox-reader/connection.ts) or a broadcast (src/broadcasts/sender.ts)
 * found the channel's grant refused: the managers are told about the channel, once per revocation
 * (unless a failed reply told already). True when this call told them.
 */
export async function tellChannelSignInRequired(ctx: Tx, channelId: string, stopped: SignInRequired['stopped']): Promise<boolean> {
  return ctx.db.transaction().execute(async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    const claimed = await claimTelling(tx, channelId, stopped);
    if (!claimed) return false;
    await recordEvent(tx, {
      workspaceId: claimed.channel.workspace_id,
      inboxId: claimed.channel.inbox_id,
      type: 'channel.sign_in_required',
      occurredAt: tx.clock.now(),
      webhook: false,
      data: { channel: { id: claimed.channel.id, name: claimed.channel.name, inbox_id: claimed.channel.inbox_id }, sign_in_required: claimed.told },
    });
    return true;
  });
}
