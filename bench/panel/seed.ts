// A large workspace for the panel's figures, written below the API in big transactions (the search
// triggers keep the index as in production): 10 messages per conversation, so 200,000 messages make
// the 20,000 conversations the list must scroll smoothly through.
import type { Ctx } from '../../src/context.js';
import { iso } from '../../src/platform/clock.js';
import { newId } from '../../src/platform/ids.js';

export const SEARCH_WORDS =
  'invoice refund shipping delay password reset account locked order tracking parcel damaged replacement warranty subscription cancel upgrade discount coupon payment card declined address change delivery courier customs receipt export import printer laptop battery screen charger'.split(
    ' ',
  );
const NAMES = 'ada grace linus ayse mehmet zeynep john maria chen priya olu ines'.split(' ');
const pick = <T>(list: T[], i: number) => list[(i * 2654435761) % list.length];

export const MESSAGES_PER_CONVERSATION = 10;
/** Conversations per transaction: big enough that commits do not dominate, small enough to stay in memory. */
const CONVERSATIONS_PER_TRANSACTION = 1000;
/** Rows per insert statement: under both dialects' bound-parameter limits (~30 columns a message). */
const ROWS_PER_INSERT = 500;

export async function seedLargeWorkspace(app: Pick<Ctx, 'db'>, messageCount: number): Promise<{ conversations: number }> {
  const ws = await app.db.selectFrom('workspaces').select('id').executeTakeFirstOrThrow();
  const inbox = await app.db.selectFrom('inboxes').select('id').where('workspace_id', '=', ws.id).executeTakeFirstOrThrow();
  const conversationCount = Math.ceil(messageCount / MESSAGES_PER_CONVERSATION);
  const start = Date.now() - messageCount * 60_000;
  for (let first = 0; first < conversationCount; first += CONVERSATIONS_PER_TRANSACTION) {
    const contacts: Record<string, unknown>[] = [];
    const emails: Record<string, unknown>[] = [];
    const conversations: Record<string, unknown>[] = [];
    const messages: Record<string, unknown>[] = [];
    for (let k = first; k < Math.min(first + CONVERSATIONS_PER_TRANSACTION, conversationCount); k++) {
      const at = start + k * MESSAGES_PER_CONVERSATION * 60_000;
      const contactId = newId('ct', at);
      const convId = newId('cv', at);
      const last = at + (MESSAGES_PER_CONVERSATION - 1) * 60_000;
      let lastBody = '';
      contacts.push({
        id: contactId,
        workspace_id: ws.id,
        name: `${pick(NAMES, k)} ${k}`,
        attributes: '{}',
        created_at: iso(new Date(at)),
        updated_at: iso(new Date(at)),
      });
      emails.push({
        workspace_id: ws.id,
        email: `${pick(NAMES, k)}.${k}@customer${k % 97}.example`,
        contact_id: contactId,
        position: 0,
        created_at: iso(new Date(at)),
      });
      for (let m = 0; m < MESSAGES_PER_CONVERSATION; m++) {
        const n = k * MESSAGES_PER_CONVERSATION + m;
        if (n >= messageCount) break;
        const body = Array.from({ length: 40 }, (_, w) => pick(SEARCH_WORDS, n * 41 + w * 13)).join(' ') + ` ref${n}`;
        lastBody = body;
        const inbound = m % 2 === 0;
        messages.push({
          id: newId('m', at + m * 60_000),
          workspace_id: ws.id,
          conversation_id: convId,
          kind: 'message' as const,
          direction: inbound ? ('in' as const) : ('out' as const),
          author_type: inbound ? ('contact' as const) : ('system' as const),
          author_person_id: null,
          author_key_id: null,
          author_contact_id: inbound ? contactId : null,
          body,
          html: null,
          subject: null,
          automatic: 0,
          details: null,
          delivery_status: null,
          delivery_error: null,
          delivery_attempts: 0,
          sent_at: null,
          mail_message_id: null,
          mail_references: null,
          mail_reply_to: null,
          attachments_omitted: 0,
          raw_storage_key: null,
          raw_size: null,
          raw_sha256: null,
          created_at: iso(new Date(at + m * 60_000)),
          imported_at: null,
        });
      }
      conversations.push({
        id: convId,
        workspace_id: ws.id,
        inbox_id: inbox.id,
        contact_id: contactId,
        channel_id: null,
        source: 'email' as const,
        status: 'open' as const,
        assignee_id: null,
        priority: null,
        subject: `${pick(SEARCH_WORDS, k)} ${pick(SEARCH_WORDS, k + 7)} #${k}`,
        spam: 0,
        imported: 0,
        created_at: iso(new Date(at)),
        updated_at: iso(new Date(last)),
        last_message_at: iso(new Date(last)),
        last_inbound_at: iso(new Date(last - 60_000)),
        preview: lastBody.slice(0, 140),
      });
    }
    await app.db.transaction().execute(async (trx) => {
      for (let i = 0; i < contacts.length; i += ROWS_PER_INSERT)
        await trx
          .insertInto('contacts')
          .values(contacts.slice(i, i + ROWS_PER_INSERT) as never)
          .execute();
      for (let i = 0; i < emails.length; i += ROWS_PER_INSERT)
        await trx
          .insertInto('contact_emails')
          .values(emails.slice(i, i + ROWS_PER_INSERT) as never)
          .execute();
      for (let i = 0; i < conversations.length; i += ROWS_PER_INSERT)
        await trx
          .insertInto('conversations')
          .values(conversations.slice(i, i + ROWS_PER_INSERT) as never)
          .execute();
      for (let i = 0; i < messages.length; i += ROWS_PER_INSERT)
        await trx
          .insertInto('messages')
          .values(messages.slice(i, i + ROWS_PER_INSERT) as never)
          .execute();
    });
  }
  return { conversations: conversationCount };
}
