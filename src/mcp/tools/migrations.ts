// The mailbox migration steps, for keys with migrations:manage and no inbox limit (the same rule as
// the migration endpoints: every tool calls `authorize(access, 'migrations:manage')` first). No
// tool takes or returns a password: migration_credentials_link hands out a page where the person
// enters it (or a help desk's API credentials), or for a sign-in provider the sign-in address.
import { z } from 'zod';
import { type Access, authorize } from '../../auth/access.js';
import { getChannel } from '../../channels/service.js';
import type { Ctx } from '../../context.js';
import { hasSmtpAccount } from '../../mail/transport.js';
import {
  act,
  cancelMigration,
  createMigration,
  detect,
  getMigrationView,
  listErrors,
  listFolders,
  listMigrations,
  listPresets,
  type MigrationInput,
  pauseCopy,
  previewMigration,
  resumeCopy,
  retryFailed,
  startCopy,
  startScan,
  testConnection,
  updateMigration,
} from '../../mailbox-migration/service.js';
import { putCredentials } from '../../mailbox-migration/sign-ins.js';
import { createCredentialsLink } from '../../mailbox-migration/sources/credential-links.js';
import { isSignInProvider } from '../../mailbox-migration/sources/sign-in.js';
import { finishMigration, sendProbe } from '../../mailbox-migration/switching/service.js';
import { defineTool, type ToolContext } from '../tool.js';

const migrationId = z.string().min(1).max(100).describe('the migration id (mig_…)');
const readOnly = { readOnlyHint: true, openWorldHint: false } as const;
const changes = { readOnlyHint: false, destructiveHint: false, openWorldHint: false } as const;

/** What can be chosen on create and update (the body of POST and PATCH /v1/migrations). */
const choices = {
  provider: z.string().max(50).optional().describe('a preset id from migration_presets; default: found from source_address (or "imap" when imap is given)'),
  source_address: z.string().max(320).nullable().optional().describe('the old mailbox’s address'),
  imap: z
    .object({ host: z.string().min(1).max(253), port: z.number().int().min(1).max(65535).optional(), tls: z.enum(['tls', 'starttls', 'none']).optional() })
    .strict()
    .nullable()
    .optional()
    .describe('the IMAP server, for provider "imap" (any other server)'),
  username: z.string().max(320).nullable().optional().describe('the mailbox user name when it is not the address'),
  inbox_id: z
    .string()
    .max(100)
    .nullable()
    .optional()
    .describe('the inbox to copy into; without channel_id its e-mail channel for the address is used, or one is made (without an SMTP account)'),
  channel_id: z.string().max(100).nullable().optional().describe('an e-mail channel of the inbox'),
  folders: z
    .array(z.string().max(1000))
    .max(1000)
    .nullable()
    .optional()
    .describe('folder paths to copy (see migration_folders); null: the inbox, sent mail and the provider’s defaults'),
  date_from: z.string().max(10).nullable().optional().describe('YYYY-MM-DD: copy mail from this day'),
  date_to: z.string().max(10).nullable().optional().describe('YYYY-MM-DD: copy mail up to this day (the whole day)'),
  folder_labels: z.record(z.string(), z.string().max(100).nullable()).optional().describe('folder → label (null: no label)'),
  team_members: z
    .record(z.string(), z.string().max(100).nullable())
    .optional()
    .describe('team address → member person id (null: shown by its original name and address)'),
  close_after_days: z.number().int().min(0).max(3650).optional().describe('imported conversations whose last message is older are closed (default 14)'),
  skip_automatic: z.boolean().optional().describe('skip threads of only automatic mail (default true)'),
  keep_originals: z.boolean().optional().describe('store the original of every message (uses more storage; default false)'),
};

function manager(access: Access) {
  authorize(access, 'migrations:manage');
}

/** What the assistant should do next, from the state and allowed actions. */
function nextStep(m: { state: string; allowed_actions: string[]; credentials: { set: boolean }; plan: { current: boolean } }): string {
  switch (m.state) {
    case 'draft':
      return m.credentials.set
        ? 'Run migration_test to check the connection (it says which step failed).'
        : 'Call migration_credentials_link and give the person the link (or, for Google and Microsoft, the sign-in address it returns); they enter the (app) password or the help desk’s API credentials there, or sign in. Then check migration_status until the state is connected.';
    case 'connected':
      return 'Choose folders (migration_folders) and options (migration_update), then run migration_scan for the dry run.';
    case 'scanning':
      return 'The dry run is reading headers; check migration_status again shortly.';
    case 'ready':
      return 'Show the person the dry run (plan.summary) and migration_preview; start only when they agree (migration_start).';
    case 'copying':
      return 'Copying, newest conversations first; follow progress with migration_status (pause, cancel or retry are possible).';
    case 'paused':
      return 'Paused: migration_resume continues.';
    case 'needs_attention':
      return 'The copy stopped; migration_errors says why. A new password (migration_credentials_link) or migration_resume continues.';
    case 'syncing':
      return 'History is copied; the old mailbox is read every two minutes. Have mail routed to the service (see routing), send the test message (migration_probe), then finish (migration_finish; force only when the person accepts that mail still reaching only the old mailbox is not copied).';
    case 'completed':
      return 'Done; the password was deleted here. Tell the person to remove the app password at the provider if they made one.';
    default:
      return `The migration is ${m.state}.`;
  }
}

/** The migration as the API shows it, what to do next, and whether its channel can send replies. */
async function status(
  ctx: Ctx,
  access: Access,
  view: Record<string, unknown> & {
    channel_id: string | null;
    state: string;
    allowed_actions: string[];
    credentials: { set: boolean };
    plan: { current: boolean };
  },
) {
  const notices: string[] = [];
  const created = view.created_channel as { message: string } | undefined;
  if (created) notices.push(created.message);
  else if (view.channel_id) {
    const channel = await getChannel(ctx, access.workspaceId, view.channel_id).catch(() => undefined);
    if (channel && !hasSmtpAccount(channel))
      notices.push(
        `Channel ${channel.id} (${channel.address}) has no SMTP account: set its SMTP server, user name and password in the panel before replies can be sent.`,
      );
  }
  return { migration: view, next_step: nextStep(view), notices };
}

const onMigration =
  (run: (ctx: Ctx, access: Access, id: string) => Promise<Awaited<ReturnType<typeof getMigrationView>>>) =>
  async ({ migration_id }: { migration_id: string }, { ctx, access }: ToolContext) => {
    manager(access);
    return status(ctx, access, await run(ctx, access, migration_id));
  };

export const migrationTools = [
  defineTool({
    name: 'migration_presets',
    title: 'Migration providers',
    description:
      'The providers this server can move a mailbox from: IMAP servers, whether an app password is needed and where to make one, and the default folders. Spam, trash and drafts are never read.',
    input: {},
    annotations: readOnly,
    async run(_args, { ctx, access }) {
      manager(access);
      return { data: listPresets(ctx.config) };
    },
  }),
  defineTool({
    name: 'migration_detect',
    title: 'Find a mailbox’s provider',
    description: 'Finds the provider of an address from its domain and MX records; nothing is read from the mailbox. Step 1 of moving a mailbox.',
    input: { address: z.string().min(3).max(320).describe('the old mailbox’s address') },
    annotations: readOnly,
    async run({ address }, { ctx, access }) {
      manager(access);
      return detect(ctx, address);
    },
  }),
  defineTool({
    name: 'migration_list',
    title: 'List migrations',
    description: 'Migrations of the workspace, newest first, with state and allowed actions.',
    input: { limit: z.number().int().min(1).max(200).optional(), cursor: z.string().max(500).optional() },
    annotations: readOnly,
    async run(page, { ctx, access }) {
      manager(access);
      return listMigrations(ctx, access, page);
    },
  }),
  defineTool({
    name: 'migration_create',
    title: 'Create a migration',
    description:
      'Creates a draft migration of a mailbox into an inbox. The old mailbox is only ever read (EXAMINE, BODY.PEEK): nothing there is deleted, moved or marked read. Name the inbox; its e-mail channel for the address is used, or one is made without an SMTP account (the answer says so: SMTP must then be set in the panel before replies can be sent). Never ask for the password: use migration_credentials_link.',
    input: choices,
    annotations: changes,
    async run(input, { ctx, access }) {
      manager(access);
      return status(ctx, access, await createMigration(ctx, access, input as MigrationInput));
    },
  }),
  defineTool({
    name: 'migration_update',
    title: 'Change a migration',
    description:
      'Changes the mailbox, inbox, channel and options of a migration. A changed choice plans the copy again (run the dry run again before starting). Mailbox, inbox and channel cannot change once copying began.',
    input: { migration_id: migrationId, ...choices },
    annotations: changes,
    async run({ migration_id, ...input }, { ctx, access }) {
      manager(access);
      return status(ctx, access, await updateMigration(ctx, access, migration_id, input as MigrationInput));
    },
  }),
  defineTool({
    name: 'migration_status',
    title: 'Migration status',
    description:
      'A migration with its state, allowed actions (anything else is refused with migration_state), credentials set or not (never the password), the dry-run summary, progress, routing and test message, plus the next step. Poll it while waiting for the person to enter the password or for the scan and copy.',
    input: { migration_id: migrationId },
    annotations: readOnly,
    run: onMigration((ctx, access, id) => getMigrationView(ctx, access, id)),
  }),
  defineTool({
    name: 'migration_credentials_link',
    title: 'Link for entering the password',
    description:
      'Returns a link to a page of this service where the person enters the mailbox’s (app) password themselves, or a help desk’s API credentials (Zendesk: subdomain, agent e-mail, API token; Help Scout: App ID and App Secret): single use, valid 30 minutes, bound to this migration; a new link ends the earlier one. For Google and Microsoft (sign-in providers) there is no password: the answer is sign_in.url instead, the provider’s sign-in page (single use, 15 minutes) for the mailbox’s owner to open. Give the link or address to the person; never ask them for the password or the secret. The page (or the sign-in) tests the connection; then migration_status shows credentials.set and the state connected.',
    input: { migration_id: migrationId },
    annotations: changes,
    async run({ migration_id }, { ctx, access, origin }) {
      manager(access);
      const m = await getMigrationView(ctx, access, migration_id);
      if (!isSignInProvider(m.provider)) return createCredentialsLink(ctx, access, migration_id, origin);
      // Started with this API key, the sign-in needs no session: its address can go to the mailbox's owner.
      const started = await putCredentials(ctx, access, migration_id, {});
      if (!('sign_in' in started)) throw new Error('a sign-in provider answers a sign-in address');
      const signIn = started.sign_in as { provider: string; url: string; expires_at: string };
      return {
        migration_id,
        mailbox: m.source_address ?? m.username,
        sign_in: signIn,
        single_use: true,
        instructions: `Give sign_in.url to the owner of the mailbox: they open it, sign in at ${signIn.provider === 'google' ? 'Google' : 'Microsoft'} and allow read access; no password is typed here. It works once, until expires_at. Then poll migration_status until credentials.set is true and the state is connected; an expired address: call this tool again.`,
      };
    },
  }),
  defineTool({
    name: 'migration_test',
    title: 'Test the connection',
    description:
      'Tests the connection to the old mailbox (DNS, connect, TLS, login, list) and says which step failed; a passing test makes a draft connected. Rate limited (rate_limited).',
    input: { migration_id: migrationId },
    annotations: { readOnlyHint: false, openWorldHint: true },
    async run({ migration_id }, { ctx, access }) {
      manager(access);
      const { result, migration } = await testConnection(ctx, access, migration_id);
      return { ...result, ...(await status(ctx, access, migration)) };
    },
  }),
  defineTool({
    name: 'migration_folders',
    title: 'Mailbox folders',
    description: 'The old mailbox’s folders (read live, read-only) with message counts, which are chosen, and which are never read (spam, trash, drafts).',
    input: { migration_id: migrationId },
    annotations: { readOnlyHint: true, openWorldHint: true },
    async run({ migration_id }, { ctx, access }) {
      manager(access);
      return listFolders(ctx, access, migration_id);
    },
  }),
  defineTool({
    name: 'migration_scan',
    title: 'Dry run',
    description:
      'Reads only the headers of the chosen folders and plans the copy; nothing is imported. The state goes scanning, then ready: migration_status then shows the dry run (plan.summary: counts per folder, skipped items and reasons, contacts, labels, storage and time). Always do this and show it before migration_start.',
    input: { migration_id: migrationId },
    annotations: changes,
    run: onMigration(startScan),
  }),
  defineTool({
    name: 'migration_preview',
    title: 'Preview conversations',
    description: 'The newest conversations as they will look after the copy (from the dry run).',
    input: { migration_id: migrationId, limit: z.number().int().min(1).max(50).optional() },
    annotations: readOnly,
    async run({ migration_id, limit }, { ctx, access }) {
      manager(access);
      return previewMigration(ctx, access, migration_id, limit);
    },
  }),
  defineTool({
    name: 'migration_start',
    title: 'Start copying',
    description:
      'Starts copying, newest conversations first, quietly (no notifications, webhooks or auto-replies for imported mail). Only after the person has seen the dry run; needs a current plan (state ready).',
    input: { migration_id: migrationId },
    annotations: changes,
    run: onMigration(startCopy),
  }),
  defineTool({
    name: 'migration_pause',
    title: 'Pause',
    description: 'Pauses the copy (migration_resume continues).',
    input: { migration_id: migrationId },
    annotations: changes,
    run: onMigration(pauseCopy),
  }),
  defineTool({
    name: 'migration_resume',
    title: 'Resume',
    description: 'Resumes a paused copy, or continues after the cause of needs_attention was fixed.',
    input: { migration_id: migrationId },
    annotations: changes,
    run: onMigration(resumeCopy),
  }),
  defineTool({
    name: 'migration_cancel',
    title: 'Cancel',
    description: 'Cancels the migration and deletes the stored password. What was copied stays (remove-history is done in the panel or the API).',
    input: { migration_id: migrationId },
    annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
    run: onMigration(cancelMigration),
  }),
  defineTool({
    name: 'migration_retry',
    title: 'Retry failed messages',
    description: 'Plans the failed messages again (see migration_errors).',
    input: { migration_id: migrationId },
    annotations: changes,
    run: onMigration(retryFailed),
  }),
  defineTool({
    name: 'migration_errors',
    title: 'What went wrong',
    description: 'Failed messages with their reason, why the migration needs attention, and commands the read-only check refused.',
    input: { migration_id: migrationId, limit: z.number().int().min(1).max(200).optional(), cursor: z.string().max(500).optional() },
    annotations: readOnly,
    async run({ migration_id, ...page }, { ctx, access }) {
      manager(access);
      return listErrors(ctx, access, migration_id, page);
    },
  }),
  defineTool({
    name: 'migration_probe',
    title: 'Send the test message',
    description:
      'While syncing: mails the old mailbox a short test message. When it reaches the service by the new route (forwarding or MX), migration_status shows test_message.arrived_at and the route. Rate limited.',
    input: { migration_id: migrationId },
    annotations: { readOnlyHint: false, openWorldHint: true },
    async run({ migration_id }, { ctx, access }) {
      manager(access);
      return status(ctx, access, (await sendProbe(ctx, access, migration_id, act)) as never);
    },
  }),
  defineTool({
    name: 'migration_finish',
    title: 'Finish',
    description:
      'Finishes a syncing migration now and deletes the password (or, with keep_reading, moves it to the channel, which then reads the mailbox live). Refused (migration_state) before the test message arrived unless force is true; with force, mail that still reaches only the old mailbox is not copied — use it only when the person accepts that.',
    input: {
      migration_id: migrationId,
      force: z.boolean().optional().describe('finish without a test message'),
      keep_reading: z
        .boolean()
        .optional()
        .describe('keep reading the mailbox live as the channel afterwards: the password or sign-in moves to the channel (default: the migration’s choice)'),
    },
    annotations: changes,
    async run({ migration_id, force, keep_reading }, { ctx, access }) {
      manager(access);
      return status(ctx, access, (await finishMigration(ctx, access, migration_id, { force, keep_reading }, act)) as never);
    },
  }),
];
