// The move_to_service prompt: the migration steps in order, with the rules the spec sets for them
// (read-only, the password only on the service's own page, dry run before start, test message,
// finish), written for an assistant that calls the migration tools.
import { z } from 'zod';

export const MOVE_TO_SERVICE = 'move_to_service';

export const moveToServiceArgs = {
  address: z.string().max(320).optional().describe('the address of the mailbox to move, if known'),
  inbox: z.string().max(100).optional().describe('the inbox id to copy into, if known'),
};

export function moveToServiceText(args: { address?: string; inbox?: string }): string {
  const address = args.address?.trim() ? `the mailbox ${args.address.trim()}` : 'a mailbox (ask the person for its address)';
  const inbox = args.inbox?.trim() ? `inbox ${args.inbox.trim()}` : 'an inbox (list_inboxes; ask the person which one)';
  return `Move ${address} into ${inbox} of this service, step by step. Tell the person what each step does before you do it.

Rules:
- The old mailbox is only read. Nothing there is deleted, moved, archived or marked read, and no setting there changes. Say so when the person asks.
- Never ask for, accept or repeat a password, API token or app secret. If the person offers one, tell them not to share it and give them the link from migration_credentials_link instead; they type it on the service's own page (for Google and Microsoft they sign in at the provider instead).
- Nothing is imported before the person has seen the dry run and agreed to start.
- Any refused call answers with an error code: migration_state lists the allowed_actions; rate_limited says when to try again; forbidden means this key lacks migrations:manage or is limited to some inboxes.

Steps:
1. Source: migration_detect with the address finds the provider (nothing is read). If it is not configured on this server, say so; an export file is uploaded in the panel instead.
2. Create: migration_create with source_address and inbox_id. Without channel_id the inbox's e-mail channel for that address is used, or one is made. If the answer's notices say the channel has no SMTP account, tell the person that the SMTP server, user name and password must be set in the panel before replies can be sent.
3. Connect: migration_credentials_link gives a single-use link (30 minutes). Give it to the person; if the provider needs an app password (migration_presets says where to make one), tell them. A help desk (Zendesk, Help Scout) is connected on the same page with its API credentials (Zendesk: subdomain, agent e-mail and API token; Help Scout: App ID and App Secret of a private app). For Google and Microsoft the tool answers sign_in.url instead: hand that address to the mailbox's owner, who signs in at the provider (single use, 15 minutes). Poll migration_status until credentials.set is true and the state is connected (the page or the sign-in tests the connection; migration_test says which step failed). An expired link or address: call the tool again.
4. Choose: migration_folders lists the folders (spam, trash and drafts are never read); agree on folders and how far back, then migration_update (folders, date_from, team_members, folder_labels, close_after_days, skip_automatic, keep_originals).
5. Review: migration_scan, then poll migration_status until ready. Show the dry run (plan.summary: counts per folder, skipped items and reasons, contacts, labels, storage and time) and migration_preview. Changing a choice plans the copy again: scan again.
6. Copy: only after the person agrees, migration_start. Report progress from migration_status; pause, resume, cancel and retry (migration_errors) are possible.
7. Switch: when the state is syncing, the old mailbox is read every two minutes. Explain the routing options in migration_status (forwarding to the forwarding address, routing on the mail server, or MX records) and help the person set one up. Then migration_probe sends a test message; poll migration_status until test_message.arrived_at is set.
8. Finish: migration_finish ends the migration and deletes the password here; it completes by itself after a quiet period as well. Only with the person's explicit consent use force (without a test message): mail that still reaches only the old mailbox is then not copied. At the end remind the person to remove the app password at the provider.`;
}
