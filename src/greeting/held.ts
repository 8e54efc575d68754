import { channelsOfInbox } from '../channels/store.js';
import type { Db } from '../db/schema.js';
import { hasSmtpAccount } from '../mail/transport.js';
import { migrationUnderwayInto } from '../mailbox-migration/store.js';
import type { GreetingHeld } from './format.js';

/**
 * Why no automatic answer would go out from this inbox now, whatever the mail: a migration into it
 * is under way (the old mailbox still answers), or none of its e-mail channels can send.
 */
export async function answerHeld(db: Db, inboxId: string): Promise<GreetingHeld | null> {
  if (await migrationUnderwayInto(db, inboxId)) return 'migration_underway';
  if (!(await channelsOfInbox(db, inboxId, 'email')).some(hasSmtpAccount)) return 'no_outgoing_mail';
  return null;
}
