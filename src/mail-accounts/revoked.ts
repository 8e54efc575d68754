// A revoked grant, as the team sees it: the first reply it fails tells the workspace's managers
// (owners and admins who see the inbox) once per revocation, with the `conversation.sign_in_required`
// event of that reply's conversation (the notifications feature tells them, trigger
// sign_in_required); a new sign-in sends again the replies it failed (the retry job).
import { findChannel } from '../channels/store.js';
import { formatConversation } from '../conversations/format.js';
import { conversationById, labelsOf } from '../conversations/store.js';
import type { Db } from '../db/schema.js';
import { recordEvent } from '../events/service.js';
import { type Clock, iso } from '../platform/clock.js';
import { providerName, type SignInRequiredError } from './grants.js';

/**
 * In the transaction that marks a reply failed by a refused sign-in: the first such failure after
 * the revocation records the event that tells the managers; later ones tell nobody.
 */
export async function tellSignInRequired(tx: { db: Db; clock: Clock }, error: SignInRequiredError, conversationId: string): Promise<void> {
  const res = await tx.db
    .updateTable('channel_grants')
    .set({ told_at: iso(tx.clock.now()) })
    .where('channel_id', '=', error.channelId)
    .where('state', '=', 'revoked')
    .where('told_at', 'is', null)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) !== 1) return;
  const [grant, channel, conversation] = await Promise.all([
    tx.db.selectFrom('channel_grants').select(['provider', 'account', 'error']).where('channel_id', '=', error.channelId).executeTakeFirstOrThrow(),
    findChannel(tx.db, error.channelId),
    conversationById(tx.db, conversationId),
  ]);
  if (!channel || !conversation) return;
  const labels = (await labelsOf(tx.db, [conversation.id])).get(conversation.id) ?? [];
  await recordEvent(tx, {
    workspaceId: conversation.workspace_id,
    inboxId: conversation.inbox_id,
    contactId: conversation.contact_id,
    type: 'conversation.sign_in_required',
    occurredAt: tx.clock.now(),
    webhook: false,
    data: {
      conversation: formatConversation(conversation, labels),
      sign_in_required: {
        channel_id: channel.id,
        channel_name: channel.name,
        provider: grant.provider,
        provider_name: providerName(grant.provider),
        account: grant.account,
        error: grant.error,
      },
    },
  });
}
