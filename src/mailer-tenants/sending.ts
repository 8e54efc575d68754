// What sending asks of the SES tenants: the headers of a mail through a managed channel, and
// whether its tenant blocks broadcasts (see service.ts for the tenants themselves).
import type { ChannelRow } from '../channels/store.js';
import type { Ctx } from '../context.js';
import { conflict } from '../platform/errors.js';
import { pausedByText, type TenantRow, tenantRow } from './service.js';

async function managedTenant(
  ctx: Pick<Ctx, 'db' | 'config'>,
  channel: Pick<ChannelRow, 'id' | 'inbox_id'>,
): Promise<{ tenant: TenantRow | undefined } | undefined> {
  if (!ctx.config.mailer) return undefined;
  const check = await ctx.db.selectFrom('mailer_channels').select('managed').where('channel_id', '=', channel.id).executeTakeFirst();
  if (check?.managed !== 1) return undefined;
  return { tenant: await tenantRow(ctx, channel.inbox_id) };
}

/** Headers of every mail through a managed channel: the tenant (once created) and the configuration set. */
export async function mailerHeaders(ctx: Pick<Ctx, 'db' | 'config'>, channel: Pick<ChannelRow, 'id' | 'inbox_id'>): Promise<Record<string, string>> {
  const managed = await managedTenant(ctx, channel);
  if (!managed) return {};
  return {
    ...(managed.tenant?.state === 'ready' ? { 'X-SES-TENANT': managed.tenant.tenant_name } : {}),
    'X-SES-CONFIGURATION-SET': ctx.config.mailer!.configurationSet,
  };
}

/** Why broadcasts through this channel may not be sent now (its tenant is disabled), or undefined. */
export async function tenantBlock(ctx: Pick<Ctx, 'db' | 'config'>, channel: Pick<ChannelRow, 'id' | 'inbox_id'>): Promise<string | undefined> {
  const managed = await managedTenant(ctx, channel);
  const t = managed?.tenant;
  if (t?.sending_status !== 'DISABLED') return undefined;
  return `${pausedByText(t.paused_by)} paused the tenant ${t.tenant_name}${t.cause ? `: ${t.cause}` : ''}`;
}

export async function assertTenantMaySend(ctx: Pick<Ctx, 'db' | 'config'>, channel: Pick<ChannelRow, 'id' | 'inbox_id'>): Promise<void> {
  const block = await tenantBlock(ctx, channel);
  if (block)
    throw conflict(
      `the inbox’s mail-provider tenant is disabled (${block}); broadcasts through its managed channels cannot be scheduled or resumed`,
      'mailer_tenant_blocked',
    );
}
