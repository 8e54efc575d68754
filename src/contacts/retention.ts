// The contacts' part of a workspace or inbox deletion (a step of src/lifecycle/registry.ts).
import { deleteConversationsWithFiles } from '../conversations/files.js';
import { conversationIdsOfContacts } from '../conversations/store.js';
import { deleteCustomFieldValuesOf } from '../custom-fields/store.js';
import type { DeletionTally, WorkspaceDataStep } from '../platform/lifecycle.js';
import { removeInboxExternalIds } from './service.js';

/** A deleted workspace's contacts (their conversations went in the step before). */
export const workspaceContactsStep: WorkspaceDataStep = {
  name: 'contacts',
  async deleteBatch(ctx, workspaceId, batch, tally?: DeletionTally) {
    const ids = (await ctx.db.selectFrom('contacts').select('id').where('workspace_id', '=', workspaceId).orderBy('id').limit(batch).execute()).map(
      (r) => r.id,
    );
    if (ids.length === 0) return { rows: 0, files: 0 };
    const rows = await ctx.db.transaction().execute(async (trx) => {
      // A conversation that arrived after the conversations step (a late commit) goes with its contact.
      const late = await conversationIdsOfContacts(trx, ids);
      if (late.length) {
        const r = await deleteConversationsWithFiles({ db: trx, clock: ctx.clock }, late);
        await tally?.(trx, { conversations: r.conversations, files: r.files });
      }
      await trx.deleteFrom('contact_emails').where('contact_id', 'in', ids).execute();
      await trx.deleteFrom('contact_external_ids').where('contact_id', 'in', ids).execute();
      await deleteCustomFieldValuesOf(trx, ids);
      const r = await trx.deleteFrom('contacts').where('id', 'in', ids).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
    return { rows, files: 0 };
  },
  // Contacts belong to the workspace and stay; their external ids in the deleted inbox go.
  async deleteInboxBatch(ctx, scope, batch) {
    return { rows: await removeInboxExternalIds(ctx, scope, batch), files: 0 };
  },
};
