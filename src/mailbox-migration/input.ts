// What a migration's settings may be (create and update): each field checked, and the columns they make.
import net from 'node:net';
import type { Access } from '../auth/access.js';
import { createEmailChannel } from '../channels/service.js';
import { channelsOfInbox, findWorkspaceChannel } from '../channels/store.js';
import { normalizeAddress } from '../contacts/service.js';
import type { Ctx } from '../context.js';
import { checkLabels } from '../conversations/service.js';
import type { Db, ImapTlsMode } from '../db/schema.js';
import { findLiveInbox } from '../inboxes/store.js';
import { isMember } from '../members/team.js';
import { invalid, notFound } from '../platform/errors.js';
import { charCount } from '../platform/text.js';
import { findPreset, providerConfigured } from './sources/presets.js';
import { notConfigured } from './sources/sign-in.js';
import { actorOf, logActivity, type MigrationRow } from './store.js';

export const CLOSE_AFTER_DEFAULT_DAYS = 14;
export interface MigrationInput {
  provider?: string;
  source_address?: string | null;
  imap?: { host: string; port?: number; tls?: ImapTlsMode } | null;
  username?: string | null;
  inbox_id?: string | null;
  channel_id?: string | null;
  folders?: string[] | null;
  date_from?: string | null;
  date_to?: string | null;
  folder_labels?: Record<string, string | null>;
  team_members?: Record<string, string | null>;
  close_after_days?: number;
  skip_automatic?: boolean;
  keep_originals?: boolean;
}

const HOST = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

function checkHost(raw: string): string {
  const h = raw.trim().toLowerCase();
  if (!HOST.test(h) && !net.isIP(h.replace(/^\[|\]$/g, ''))) throw invalid(`imap.host is not a host name: ${JSON.stringify(raw)}`);
  return h;
}

function checkDate(raw: string | null | undefined, field: string): string | null | undefined {
  if (raw === undefined || raw === null) return raw;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(raw) || Number.isNaN(new Date(`${raw}T00:00:00Z`).getTime())) throw invalid(`${field} must be a date written YYYY-MM-DD`);
  return raw;
}

export function address(raw: string, field: string): string {
  try {
    const a = normalizeAddress(raw);
    if (!/^[^\s@]+@[^\s@]+$/.test(a)) throw new Error();
    return a;
  } catch {
    throw invalid(`${field} is not an e-mail address: ${JSON.stringify(raw)}`);
  }
}

/**
 * The migration's inbox and channel: the channel must be an e-mail channel of that inbox. When only
 * the inbox is named, its e-mail channel for the mailbox's address is taken; when it has none, one
 * is to be made for that address (`createChannelFor`, by the caller in its transaction: see
 * `createChannelForMailbox`). Without an address, the inbox's first e-mail channel is taken.
 */
async function checkPlace(
  ctx: Pick<Ctx, 'db'>,
  workspaceId: string,
  inboxId: string | null | undefined,
  channelId: string | null | undefined,
  mailboxAddress: string | null,
) {
  let inbox = inboxId;
  let channel = channelId;
  let createChannelFor: string | null = null;
  if (channel) {
    const row = await findWorkspaceChannel(ctx.db, workspaceId, channel);
    if (!row) throw notFound(`channel ${channel}`);
    if (row.kind !== 'email') throw invalid('channel_id must name an e-mail channel');
    if (inbox && inbox !== row.inbox_id) throw invalid('channel_id must be a channel of inbox_id');
    inbox = row.inbox_id;
  }
  if (inbox) {
    const row = await findLiveInbox(ctx.db, workspaceId, inbox);
    if (!row) throw notFound(`inbox ${inbox}`);
    if (!channel) {
      const emailChannels = await channelsOfInbox(ctx.db, inbox, 'email');
      const forAddress = mailboxAddress ? emailChannels.find((c) => c.address === mailboxAddress) : undefined;
      channel = forAddress?.id ?? (mailboxAddress ? null : (emailChannels[0]?.id ?? null));
      if (!channel && mailboxAddress) createChannelFor = mailboxAddress;
    }
  }
  return { inbox_id: inbox ?? null, channel_id: channel ?? null, createChannelFor };
}

const NEW_CHANNEL_SMTP_NOTICE =
  'A new e-mail channel was made for this address. It has no SMTP account: set its SMTP server, user name and password in the panel (Settings › Inboxes and channels) before replies can be sent.';

/**
 * Makes the e-mail channel a migration needs for its address (no SMTP account) in the caller's
 * transaction, with a line in the activity log. What the answer says about it: `created_channel`.
 */
export async function createChannelForMailbox(
  ctx: Ctx,
  tx: { db: Db; clock: Ctx['clock'] },
  m: Pick<MigrationRow, 'id' | 'workspace_id'>,
  inboxId: string,
  address: string,
  access: Access,
) {
  const channel = await createEmailChannel({ ...ctx, db: tx.db }, { workspaceId: m.workspace_id, inboxId, name: address, address });
  await logActivity(tx, m, actorOf(access), 'channel_created', { channel_id: channel.id, address });
  return { id: channel.id, address, smtp_configured: false, message: NEW_CHANNEL_SMTP_NOTICE };
}

async function checkTeam(ctx: Pick<Ctx, 'db'>, workspaceId: string, mapping: Record<string, string | null>): Promise<Record<string, string | null>> {
  const entries = Object.entries(mapping);
  if (entries.length > 200) throw invalid('team_members maps at most 200 addresses');
  const out: Record<string, string | null> = {};
  for (const [raw, personId] of entries) {
    const a = address(raw, 'a team_members address');
    if (personId !== null) {
      if (!(await isMember(ctx.db, workspaceId, personId))) throw invalid(`team_members: ${personId} is not a member of this workspace`);
    }
    out[a] = personId;
  }
  return out;
}

function checkFolderLabels(mapping: Record<string, string | null>): Record<string, string | null> {
  const entries = Object.entries(mapping);
  if (entries.length > 1000) throw invalid('folder_labels maps at most 1000 folders');
  const out: Record<string, string | null> = {};
  for (const [folder, label] of entries) {
    if (!folder || charCount(folder) > 1000) throw invalid('folder_labels: folder names are 1 to 1000 characters');
    out[folder] = label === null ? null : (checkLabels([label])[0] ?? null);
  }
  return out;
}

function checkFolders(folders: string[] | null): string[] | null {
  if (folders === null) return null;
  if (folders.length === 0 || folders.length > 1000) throw invalid('folders lists 1 to 1000 folders (null: the default folders)');
  for (const f of folders) if (!f || charCount(f) > 1000 || /[\u0000\r\n]/.test(f)) throw invalid('folder names are 1 to 1000 characters on one line');
  return [...new Set(folders)];
}

/** The columns an input sets (validated). `plan` says whether the copy must be planned again. */
export async function columnsOf(ctx: Pick<Ctx, 'db' | 'config'>, workspaceId: string, input: MigrationInput, current?: MigrationRow) {
  const set: Partial<MigrationRow> = {};
  let mailboxChanged = false;
  let planChanged = false;
  if (input.provider !== undefined) {
    const preset = findPreset(input.provider);
    if (!preset) throw invalid(`unknown provider ${JSON.stringify(input.provider)}; see GET /v1/migrations/presets`);
    if (!providerConfigured(preset, ctx.config)) throw notConfigured(preset);
    set.provider = preset.id;
    mailboxChanged ||= current?.provider !== preset.id;
  }
  if (input.source_address !== undefined) {
    set.source_address = input.source_address === null ? null : address(input.source_address, 'source_address');
    mailboxChanged ||= current?.source_address !== set.source_address;
  }
  if (input.imap !== undefined) {
    if (input.imap === null) Object.assign(set, { imap_host: null, imap_port: null, imap_tls: null });
    else {
      const tls = input.imap.tls ?? 'tls';
      if (input.imap.port !== undefined && (!Number.isInteger(input.imap.port) || input.imap.port < 1 || input.imap.port > 65535))
        throw invalid('imap.port must be 1 to 65535');
      Object.assign(set, { imap_host: checkHost(input.imap.host), imap_port: input.imap.port ?? (tls === 'tls' ? 993 : 143), imap_tls: tls });
    }
    mailboxChanged = true;
  }
  if (input.username !== undefined) {
    const u = input.username === null ? null : input.username.trim();
    if (u !== null && (!u || charCount(u) > 320 || /[\u0000-\u001f]/.test(u))) throw invalid('username must be 1 to 320 printable characters');
    set.username = u;
    mailboxChanged ||= current?.username !== u;
  }
  let createChannelFor: string | null = null;
  if (input.inbox_id !== undefined || input.channel_id !== undefined) {
    const mailboxAddress = set.source_address !== undefined ? set.source_address : (current?.source_address ?? null);
    const place = await checkPlace(
      ctx,
      workspaceId,
      input.inbox_id === undefined ? current?.inbox_id : input.inbox_id,
      input.channel_id === undefined ? (input.inbox_id !== undefined ? undefined : current?.channel_id) : input.channel_id,
      mailboxAddress,
    );
    set.inbox_id = place.inbox_id;
    set.channel_id = place.channel_id;
    createChannelFor = place.createChannelFor;
    planChanged ||= current?.inbox_id !== place.inbox_id || current?.channel_id !== place.channel_id;
  }
  if (input.folders !== undefined) {
    set.folders = input.folders === null ? null : JSON.stringify(checkFolders(input.folders));
    planChanged = true;
  }
  if (input.date_from !== undefined) {
    set.date_from = checkDate(input.date_from, 'date_from') ?? null;
    planChanged = true;
  }
  if (input.date_to !== undefined) {
    set.date_to = checkDate(input.date_to, 'date_to') ?? null;
    planChanged = true;
  }
  const from = set.date_from !== undefined ? set.date_from : current?.date_from;
  const to = set.date_to !== undefined ? set.date_to : current?.date_to;
  if (from && to && from > to) throw invalid('date_from must not be after date_to');
  if (input.folder_labels !== undefined) {
    set.folder_labels = JSON.stringify(checkFolderLabels(input.folder_labels));
    planChanged = true;
  }
  if (input.team_members !== undefined) {
    set.team_members = JSON.stringify(await checkTeam(ctx, workspaceId, input.team_members));
    planChanged = true;
  }
  if (input.close_after_days !== undefined) {
    if (!Number.isInteger(input.close_after_days) || input.close_after_days < 0 || input.close_after_days > 3650)
      throw invalid('close_after_days must be 0 to 3650');
    set.close_after_days = input.close_after_days;
    planChanged = true;
  }
  if (input.skip_automatic !== undefined) {
    set.skip_automatic = input.skip_automatic ? 1 : 0;
    planChanged = true;
  }
  if (input.keep_originals !== undefined) {
    set.keep_originals = input.keep_originals ? 1 : 0;
    planChanged = true;
  }
  return { set, mailboxChanged, planChanged: planChanged || mailboxChanged, createChannelFor };
}
