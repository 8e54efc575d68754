// Reads of channels for other features (mail, broadcasts, migrations, the widget, tenants): they
// use these instead of querying the channels table themselves. Imports no feature, so any may use it.
import { reusableQuery } from '../db/reusable-query.js';
import type { ChannelsTable, Db } from '../db/schema.js';

export type ChannelRow = ChannelsTable;
export type ChannelKind = ChannelRow['kind'];

export async function findChannel(db: Db, channelId: string): Promise<ChannelRow | undefined> {
  return db.selectFrom('channels').selectAll().where('id', '=', channelId).executeTakeFirst();
}

/** The inbox of each channel that still exists. */
export async function inboxesOfChannels(db: Db, channelIds: readonly string[]): Promise<Map<string, string>> {
  if (channelIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('channels')
    .select(['id', 'inbox_id'])
    .where('id', 'in', [...channelIds])
    .execute();
  return new Map(rows.map((c) => [c.id, c.inbox_id]));
}

/** The channel only if it belongs to the workspace. */
export async function findWorkspaceChannel(db: Db, workspaceId: string, channelId: string): Promise<ChannelRow | undefined> {
  return db.selectFrom('channels').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', channelId).executeTakeFirst();
}

/** The inbox's channels (of one kind if given), oldest first. */
export async function channelsOfInbox(db: Db, inboxId: string, kind?: ChannelKind): Promise<ChannelRow[]> {
  let q = db.selectFrom('channels').selectAll().where('inbox_id', '=', inboxId);
  if (kind) q = q.where('kind', '=', kind);
  return q.orderBy('id').execute();
}

/** The inbox's oldest channel of the kind: where replies go when nothing names a channel. */
export async function firstChannelOfInbox(db: Db, inboxId: string, kind: ChannelKind): Promise<ChannelRow | undefined> {
  return db.selectFrom('channels').selectAll().where('inbox_id', '=', inboxId).where('kind', '=', kind).orderBy('id').executeTakeFirst();
}

/** The workspace's e-mail channels that name an SMTP server. */
export async function smtpChannelsOfWorkspace(db: Db, workspaceId: string): Promise<ChannelRow[]> {
  return db
    .selectFrom('channels')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('kind', '=', 'email')
    .where('smtp_host', 'is not', null)
    .orderBy('id')
    .execute();
}

// Asked at every RCPT TO of the SMTP ingress: built and compiled once.
const emailChannelByAddress = reusableQuery((db, address: string) =>
  db
    .selectFrom('channels')
    .innerJoin('workspaces', 'workspaces.id', 'channels.workspace_id')
    .selectAll('channels')
    .where('channels.kind', '=', 'email')
    .where('workspaces.deleted_at', 'is', null)
    .where('channels.address', '=', address)
    .limit(1),
);
const emailChannelByAddressOrForwarding = reusableQuery((db, address: string, forwardingAddress: string) =>
  db
    .selectFrom('channels')
    .innerJoin('workspaces', 'workspaces.id', 'channels.workspace_id')
    .selectAll('channels')
    .where('channels.kind', '=', 'email')
    .where('workspaces.deleted_at', 'is', null)
    .where((eb) => eb.or([eb('channels.address', '=', address), eb('channels.forwarding_address', '=', forwardingAddress)]))
    .limit(1),
);

/** The e-mail channel mail to the address reaches (its address, or its forwarding address when `forwarding`), in a workspace not deleted. */
export async function emailChannelForAddress(db: Db, address: string, opts: { forwarding: boolean }): Promise<ChannelRow | undefined> {
  const rows = opts.forwarding ? await emailChannelByAddressOrForwarding(db, address, address) : await emailChannelByAddress(db, address);
  return rows[0];
}

/** The chat channel of a public key, in a workspace not deleted. */
export async function chatChannelForPublicKey(db: Db, publicKey: string): Promise<ChannelRow | undefined> {
  return db
    .selectFrom('channels')
    .innerJoin('workspaces', 'workspaces.id', 'channels.workspace_id')
    .selectAll('channels')
    .where('channels.public_key', '=', publicKey)
    .where('channels.kind', '=', 'chat')
    .where('workspaces.deleted_at', 'is', null)
    .executeTakeFirst();
}

/** E-mail channels without a forwarding address on the domain. */
export async function channelsWithoutForwardingOn(db: Db, domain: string): Promise<Pick<ChannelRow, 'id' | 'forwarding_address'>[]> {
  return db
    .selectFrom('channels')
    .select(['id', 'forwarding_address'])
    .where('kind', '=', 'email')
    .where((eb) => eb.or([eb('forwarding_address', 'is', null), eb('forwarding_address', 'not like', `%@${domain}`)]))
    .execute();
}

export async function setForwardingAddress(db: Db, channelId: string, address: string, now: string): Promise<void> {
  await db.updateTable('channels').set({ forwarding_address: address, updated_at: now }).where('id', '=', channelId).execute();
}
