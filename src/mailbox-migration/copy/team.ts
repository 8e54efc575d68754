// The team's addresses in an old mailbox: mail from them is outgoing (authored by the mapped member,
// else shown by its original name and address); everyone else is a customer.
import { findChannel } from '../../channels/store.js';
import { normalizeAddress } from '../../contacts/service.js';
import type { Ctx } from '../../context.js';
import { memberPersonIds } from '../../members/team.js';
import { peopleEmails } from '../../people/directory.js';
import { helpDeskAgents } from '../sources/helpdesk/store.js';
import type { MigrationRow } from '../store.js';

export interface TeamAddresses {
  addresses: Set<string>;
  /** Address → member (person id) who wrote from it, when known. */
  members: Map<string, string>;
}

function clean(raw: string | null | undefined): string | null {
  if (!raw || !raw.includes('@')) return null;
  try {
    return normalizeAddress(raw);
  } catch {
    return null;
  }
}

export async function teamAddressesOf(
  ctx: Pick<Ctx, 'db'>,
  m: Pick<MigrationRow, 'id' | 'workspace_id' | 'team_members' | 'source_address' | 'username' | 'channel_id'>,
): Promise<TeamAddresses> {
  const addresses = new Set<string>();
  const members = new Map<string, string>();
  const add = (raw: string | null | undefined) => {
    const a = clean(raw);
    if (a) addresses.add(a);
    return a;
  };
  add(m.source_address);
  add(m.username);
  if (m.channel_id) {
    const channel = await findChannel(ctx.db, m.channel_id);
    add(channel?.address);
    add(channel?.from_address);
  }
  for (const p of await peopleEmails(ctx.db, await memberPersonIds(ctx.db, m.workspace_id))) {
    const a = add(p.email);
    if (a) members.set(a, p.id);
  }
  // A help desk's agents wrote as the team (their comments are outgoing, their notes notes).
  for (const agent of await helpDeskAgents(ctx.db, m.id)) add(agent);
  const mapping = JSON.parse(m.team_members) as Record<string, string | null>;
  for (const [raw, personId] of Object.entries(mapping)) {
    const a = add(raw);
    if (!a) continue;
    if (personId) members.set(a, personId);
    else members.delete(a);
  }
  return { addresses, members };
}
