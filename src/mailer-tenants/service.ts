// Per-inbox Amazon SES tenants for managed channels (spec: Hosted-server provider setup; States
// and transitions › Mail-provider tenant).
//
// A channel is managed when its SMTP host is the SES SMTP endpoint of SVC_MAILER_REGION and its
// SMTP user name is an access key of the server key's account (STS GetAccessKeyInfo vs
// GetCallerIdentity, cached per process). For an inbox with managed channels the server keeps a
// tenant `<SVC_MAILER_TENANT_PREFIX><inbox id>` with tenant-level suppression of bounces and
// complaints, the configuration set and the channels' sending identities associated, tagged with
// the workspace and inbox. Writes happen only when a channel is saved, on `broadcasts approve` and
// by `svc inbox mailer-tenant sync` — never at startup. Status is read every five minutes (and
// within seconds after a tenant event on the SNS endpoint, whose content is not trusted: it only
// triggers a re-read). A tenant that becomes disabled pauses its inbox's running and scheduled
// broadcasts through managed channels (reason `mailer_tenant`), refuses scheduling and resuming
// (409 `mailer_tenant_blocked`) and puts a "Tenant paused" line in the operator digest. Support
// replies are still attempted. Nothing resumes by itself. Provider errors are stored on the row
// and shown by `svc inbox mailer-tenant show`; they never fail a request.

import type { Tag } from '@aws-sdk/client-sesv2';
import type { Selectable } from 'kysely';
import { pauseBroadcasts } from '../broadcasts/store.js';
import { type ChannelRow, channelsOfInbox, findChannel, smtpChannelsOfWorkspace } from '../channels/store.js';
import type { Ctx } from '../context.js';
import type { MailerTenantsTable } from '../db/schema.js';
import type { ChannelSavedSignal } from '../events/reaction-types.js';
import { findInbox } from '../inboxes/store.js';
import { addDigestLine } from '../operator-digest/service.js';
import { iso, MINUTE } from '../platform/clock.js';
import { conflict } from '../platform/errors.js';
import { enqueue, type JobKind } from '../platform/jobs.js';
import { findWorkspace } from '../workspaces/store.js';
import {
  configurationSetArn,
  describeProviderError,
  identityArn,
  type MailerConfig,
  type MailerProvider,
  mailerProvider,
  type ReputationEntity,
  sesSmtpEndpoint,
} from './provider.js';
import { CHANNEL_SAVED_JOB, type ChannelSavedJob } from './reaction.js';

export type TenantRow = Selectable<MailerTenantsTable>;

export const UPKEEP_JOB = 'mailer.tenant_upkeep';
export const STATUS_JOB = 'mailer.tenant_status';
export const REFRESH_JOB = 'mailer.tenant_refresh';
export const STATUS_EVERY_MS = 5 * MINUTE;

export function tenantName(config: MailerConfig, inboxId: string): string {
  return `${config.tenantPrefix}${inboxId}`;
}

/** Without provider calls: could this channel be managed (the SES endpoint of the region, an access-key user name)? */
export function mayBeManaged(config: Ctx['config'], channel: Pick<ChannelRow, 'kind' | 'smtp_host' | 'smtp_username'>): boolean {
  const m = config.mailer;
  return (
    !!m &&
    channel.kind === 'email' &&
    channel.smtp_host?.toLowerCase() === sesSmtpEndpoint(m) &&
    /^(AKIA|ASIA)[A-Z0-9]{12,124}$/.test(channel.smtp_username ?? '')
  );
}

interface ChannelCheck {
  channel: ChannelRow;
  managed: boolean;
  reason: string;
  identity: string | null;
}

async function checkChannel(
  ctx: Pick<Ctx, 'config'>,
  provider: MailerProvider,
  channel: ChannelRow,
  identities: () => Promise<{ name: string }[]>,
): Promise<ChannelCheck> {
  const m = provider.config;
  const no = (reason: string): ChannelCheck => ({ channel, managed: false, reason, identity: null });
  if (channel.kind !== 'email' || !channel.smtp_host) return no('no SMTP account');
  if (channel.smtp_host.toLowerCase() !== sesSmtpEndpoint(m)) return no(`SMTP host is not ${sesSmtpEndpoint(m)}`);
  if (!mayBeManaged(ctx.config, channel)) return no('SMTP user name is not an access key');
  const [keyAccount, account] = await Promise.all([provider.accountOfKey(channel.smtp_username!), provider.serverAccount()]);
  if (keyAccount !== account) return no(`SMTP user name is an access key of another account (${keyAccount})`);
  const address = (channel.from_address ?? channel.address ?? '').toLowerCase();
  const known = new Set((await identities()).map((i) => i.name));
  let identity: string | null = known.has(address) ? address : null;
  for (let domain = address.slice(address.indexOf('@') + 1); !identity && domain.includes('.'); domain = domain.slice(domain.indexOf('.') + 1)) {
    if (known.has(domain)) identity = domain;
  }
  return {
    channel,
    managed: true,
    reason: `SES SMTP endpoint of ${m.region}, access key of account ${account}${identity ? '' : `; no verified identity covers ${address}`}`,
    identity,
  };
}

export async function tenantRow(ctx: Pick<Ctx, 'db'>, inboxId: string): Promise<TenantRow | undefined> {
  return ctx.db.selectFrom('mailer_tenants').selectAll().where('inbox_id', '=', inboxId).executeTakeFirst();
}

async function recordError(ctx: Pick<Ctx, 'db' | 'clock' | 'log'>, inboxId: string, error: unknown): Promise<string> {
  const text = describeProviderError(error);
  const now = iso(ctx.clock.now());
  await ctx.db.updateTable('mailer_tenants').set({ last_error: text, last_error_at: now, updated_at: now }).where('inbox_id', '=', inboxId).execute();
  ctx.log.warn('mailer tenant call failed', { inbox_id: inboxId, error: text });
  return text;
}

export interface UpkeepResult {
  inboxId: string;
  slug: string;
  /** What was done (or, for a dry run, would be done). */
  actions: string[];
  status: string | null;
  error: string | null;
}

/**
 * Creates and updates the inbox's tenant (and refreshes its status); with `dryRun` only reads and
 * says what it would change. Errors are stored on the tenant row and returned, not thrown.
 */
export async function upkeepInbox(ctx: Ctx, inboxId: string, opts: { dryRun?: boolean } = {}): Promise<UpkeepResult> {
  const provider = mailerProvider(ctx);
  if (!provider)
    throw conflict(
      'the tenant feature is off: SVC_MAILER_REGION, SVC_MAILER_ACCESS_KEY_ID, SVC_MAILER_SECRET_ACCESS_KEY and SVC_MAILER_CONFIGURATION_SET are not set',
      'mailer_not_configured',
    );
  const m = provider.config;
  const found = await findInbox(ctx.db, inboxId);
  const inbox = found && found.deleted_at === null ? found : undefined;
  const result: UpkeepResult = { inboxId, slug: inbox?.slug ?? '-', actions: [], status: null, error: null };
  if (!inbox) return { ...result, actions: ['inbox is gone'] };
  const name = tenantName(m, inbox.id);
  const prefix = opts.dryRun ? 'would ' : '';
  try {
    const channels = await channelsOfInbox(ctx.db, inbox.id, 'email');
    let identityList: Promise<{ name: string }[]> | undefined;
    const identities = () => (identityList ??= provider.identities());
    const checks: ChannelCheck[] = [];
    for (const ch of channels) checks.push(await checkChannel(ctx, provider, ch, identities));
    if (!opts.dryRun) await storeChannelChecks(ctx, inbox.workspace_id, inbox.id, checks);
    const managed = checks.filter((c) => c.managed);
    const existing = await tenantRow(ctx, inbox.id);
    if (managed.length === 0) {
      result.actions.push('no managed channel');
      result.status = existing?.sending_status ?? null;
      return result;
    }
    const now = iso(ctx.clock.now());
    if (!existing && !opts.dryRun) {
      await ctx.db
        .insertInto('mailer_tenants')
        .values({
          inbox_id: inbox.id,
          workspace_id: inbox.workspace_id,
          tenant_name: name,
          tenant_id: null,
          tenant_arn: null,
          state: 'pending',
          sending_status: null,
          paused_by: null,
          cause: null,
          resources: '[]',
          status_checked_at: null,
          status_changed_at: null,
          last_error: null,
          last_error_at: null,
          created_at: now,
          updated_at: now,
        })
        .onConflict((oc) => oc.column('inbox_id').doNothing())
        .execute();
    }
    const account = await provider.serverAccount();
    const tags: Tag[] = [
      { Key: 'svc:workspace', Value: inbox.workspace_id },
      { Key: 'svc:inbox', Value: inbox.id },
    ];
    let tenant = await provider.getTenant(name);
    if (!tenant) {
      result.actions.push(`${prefix}create tenant ${name}`);
      if (!opts.dryRun) tenant = await provider.createTenant(name, tags);
    } else {
      const s = tenant.SuppressionAttributes;
      if (s?.SuppressionScope !== 'TENANT' || !s.SuppressedReasons?.includes('BOUNCE') || !s.SuppressedReasons?.includes('COMPLAINT')) {
        result.actions.push(`${prefix}set tenant-level suppression of bounces and complaints`);
        if (!opts.dryRun) await provider.putSuppression(name);
      }
      const missing = tags.filter((t) => !tenant!.Tags?.some((x) => x.Key === t.Key && x.Value === t.Value));
      if (missing.length && tenant.TenantArn) {
        result.actions.push(`${prefix}tag tenant`);
        if (!opts.dryRun) await provider.tag(tenant.TenantArn, missing);
      }
    }
    const have = tenant?.TenantName ? await provider.tenantResources(name) : [];
    const wanted = [configurationSetArn(m, account), ...new Set(managed.filter((c) => c.identity).map((c) => identityArn(m, account, c.identity!)))];
    for (const arn of wanted) {
      if (have.some((r) => r.arn === arn)) continue;
      result.actions.push(`${prefix}associate ${arn}`);
      if (!opts.dryRun) await provider.associate(name, arn);
    }
    for (const c of managed.filter((c) => !c.identity)) result.actions.push(`no verified identity for ${c.channel.from_address ?? c.channel.address}`);
    if (opts.dryRun) {
      result.status = existing?.sending_status ?? null;
      return result;
    }
    const resources = await provider.tenantResources(name);
    await ctx.db
      .updateTable('mailer_tenants')
      .set({
        tenant_id: tenant!.TenantId ?? null,
        tenant_arn: tenant!.TenantArn ?? null,
        state: 'ready',
        resources: JSON.stringify(resources),
        last_error: null,
        last_error_at: null,
        updated_at: iso(ctx.clock.now()),
      })
      .where('inbox_id', '=', inbox.id)
      .execute();
    const entity = tenant!.TenantArn ? await provider.reputation(tenant!.TenantArn) : undefined;
    const row = (await tenantRow(ctx, inbox.id))!;
    result.status = entity ? (await applyStatus(ctx, row, entity)).sending_status : (tenant!.SendingStatus ?? null);
    if (!result.actions.length) result.actions.push('up to date');
    ctx.log.info('mailer tenant kept up', { inbox_id: inbox.id, tenant: name, changes: result.actions.length });
    return result;
  } catch (error) {
    result.error = opts.dryRun ? describeProviderError(error) : await recordError(ctx, inbox.id, error);
    return result;
  }
}

async function storeChannelChecks(ctx: Pick<Ctx, 'db' | 'clock'>, workspaceId: string, inboxId: string, checks: ChannelCheck[]): Promise<void> {
  const now = iso(ctx.clock.now());
  for (const c of checks) {
    const values = { managed: c.managed ? 1 : 0, reason: c.reason, identity: c.identity, checked_at: now, inbox_id: inboxId, workspace_id: workspaceId };
    await ctx.db
      .insertInto('mailer_channels')
      .values({ channel_id: c.channel.id, ...values })
      .onConflict((oc) => oc.column('channel_id').doUpdateSet(values))
      .execute();
  }
}

function readStatus(entity: ReputationEntity) {
  const aws = entity.AwsSesManagedStatus;
  const customer = entity.CustomerManagedStatus;
  const disabled = aws?.Status === 'DISABLED' || customer?.Status === 'DISABLED';
  const status = (entity.SendingStatusAggregate ?? (disabled ? 'DISABLED' : (customer?.Status ?? aws?.Status ?? 'ENABLED'))) as TenantRow['sending_status'];
  const pausedBy: TenantRow['paused_by'] = status !== 'DISABLED' ? null : aws?.Status === 'DISABLED' ? 'provider' : 'reputation_policy';
  const cause =
    pausedBy === 'provider' ? aws?.Cause : pausedBy === 'reputation_policy' ? customer?.Cause : customer?.Status === 'REINSTATED' ? customer.Cause : undefined;
  return { status, pausedBy, cause: cause ?? null };
}

export function pausedByText(pausedBy: TenantRow['paused_by']): string {
  return pausedBy === 'provider' ? 'Amazon SES itself' : 'the reputation policy';
}

/** Stores a status read; a tenant that became disabled pauses its inbox's broadcasts through managed channels. */
export async function applyStatus(ctx: Ctx, row: TenantRow, entity: ReputationEntity): Promise<TenantRow> {
  const { status, pausedBy, cause } = readStatus(entity);
  const now = iso(ctx.clock.now());
  const changed = status !== row.sending_status || pausedBy !== row.paused_by;
  const becameDisabled = status === 'DISABLED' && row.sending_status !== 'DISABLED';
  const paused = await ctx.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('mailer_tenants')
      .set({ sending_status: status, paused_by: pausedBy, cause, status_checked_at: now, ...(changed ? { status_changed_at: now } : {}), updated_at: now })
      .where('inbox_id', '=', row.inbox_id)
      .execute();
    if (!becameDisabled) return undefined;
    const managed = await trx.selectFrom('mailer_channels').select('channel_id').where('inbox_id', '=', row.inbox_id).where('managed', '=', 1).execute();
    const detail = `${pausedByText(pausedBy)} paused the tenant ${row.tenant_name}${cause ? `: ${cause}` : ''}`;
    const ids = await pauseBroadcasts(
      { db: trx, clock: ctx.clock, metrics: ctx.metrics },
      { workspaceId: row.workspace_id, inboxId: row.inbox_id, channelIds: managed.map((c) => c.channel_id) },
      'mailer_tenant',
      detail,
    );
    const inbox = await findInbox(trx, row.inbox_id);
    const workspace = inbox ? await findWorkspace(trx, inbox.workspace_id) : undefined;
    const names = inbox && workspace ? { inbox: inbox.name, workspace: workspace.name } : undefined;
    await addDigestLine(
      { ...ctx, db: trx },
      {
        kind: 'tenant_paused',
        workspaceId: row.workspace_id,
        text: `workspace ${JSON.stringify(names?.workspace ?? '')} (${row.workspace_id}), inbox ${JSON.stringify(names?.inbox ?? '')} (${row.inbox_id}): tenant ${row.tenant_name} paused by ${pausedByText(pausedBy)}; cause: ${cause ?? 'not given'}; ${ids.length} broadcast(s) paused.${pausedBy === 'provider' ? ' Only a case with AWS support lifts this pause.' : ` Lift it with: svc inbox mailer-tenant reinstate --workspace ${row.workspace_id} --inbox ${row.inbox_id}`}`,
      },
    );
    return ids;
  });
  if (paused) ctx.log.warn('mailer tenant paused', { inbox_id: row.inbox_id, tenant: row.tenant_name, paused_by: pausedBy, broadcasts_paused: paused.length });
  else if (changed) ctx.log.info('mailer tenant status changed', { inbox_id: row.inbox_id, tenant: row.tenant_name, status });
  return (await tenantRow(ctx, row.inbox_id))!;
}

/** Re-reads one tenant's status. */
export async function refreshTenant(ctx: Ctx, inboxId: string): Promise<TenantRow | undefined> {
  const provider = mailerProvider(ctx);
  const row = await tenantRow(ctx, inboxId);
  if (!provider || !row?.tenant_arn) return row;
  try {
    const entity = await provider.reputation(row.tenant_arn);
    return entity ? applyStatus(ctx, row, entity) : row;
  } catch (error) {
    await recordError(ctx, inboxId, error);
    return tenantRow(ctx, inboxId);
  }
}

/** Every five minutes: the status of every tenant (one listing of the account's reputation entities). */
export async function readAllStatuses(ctx: Ctx): Promise<number> {
  const provider = mailerProvider(ctx);
  if (!provider) return 0;
  const rows = await ctx.db.selectFrom('mailer_tenants').selectAll().where('state', '=', 'ready').where('tenant_arn', 'is not', null).execute();
  if (rows.length === 0) return 0;
  const entities = new Map<string, ReputationEntity>();
  try {
    for await (const e of provider.reputations()) if (e.ReputationEntityReference) entities.set(e.ReputationEntityReference, e);
  } catch (error) {
    for (const r of rows) await recordError(ctx, r.inbox_id, error);
    return 0;
  }
  for (const row of rows) {
    const entity = entities.get(row.tenant_arn!);
    if (entity) await applyStatus(ctx, row, entity);
    else await refreshTenant(ctx, row.inbox_id);
  }
  return rows.length;
}

/** A tenant event came through the SNS endpoint: re-read the tenants it names (all when it names none of ours). */
export async function tenantEventReceived(ctx: Ctx, event: { resources?: unknown; detail?: unknown }): Promise<number> {
  if (!ctx.config.mailer) return 0;
  const named = new Set<string>();
  const collect = (v: unknown, depth = 0): void => {
    if (depth > 4 || named.size > 100) return;
    if (typeof v === 'string') named.add(v);
    else if (Array.isArray(v)) for (const x of v) collect(x, depth + 1);
    else if (v && typeof v === 'object') for (const x of Object.values(v)) collect(x, depth + 1);
  };
  collect(event.resources);
  collect(event.detail);
  const rows = await ctx.db.selectFrom('mailer_tenants').select(['inbox_id', 'tenant_arn', 'tenant_name']).where('state', '=', 'ready').execute();
  const matched = rows.filter((r) => named.has(r.tenant_name) || (r.tenant_arn && named.has(r.tenant_arn)));
  for (const r of matched.length ? matched : rows) {
    await enqueue(ctx.db, ctx.clock, { kind: REFRESH_JOB, payload: { inboxId: r.inbox_id }, uniqueKey: `${REFRESH_JOB}:${r.inbox_id}` });
  }
  ctx.jobs.wake();
  return (matched.length ? matched : rows).length;
}

/** Lifts a pause of the reputation policy (customer-managed status → REINSTATED). */
export async function reinstateTenant(ctx: Ctx, inboxId: string): Promise<TenantRow> {
  const provider = mailerProvider(ctx);
  if (!provider) throw conflict('the tenant feature is off (SVC_MAILER_* are not set)', 'mailer_not_configured');
  const row = await tenantRow(ctx, inboxId);
  if (!row?.tenant_arn) throw conflict('the inbox has no tenant at the provider yet', 'mailer_tenant_missing');
  const entity = await provider.reputation(row.tenant_arn);
  if (!entity) throw conflict(`the provider does not know tenant ${row.tenant_name}`, 'mailer_tenant_missing');
  const current = await applyStatus(ctx, row, entity);
  if (entity.AwsSesManagedStatus?.Status === 'DISABLED') {
    throw conflict(`tenant ${row.tenant_name} was paused by Amazon SES itself; only a case with AWS support lifts this pause`, 'mailer_tenant_provider_paused');
  }
  if (entity.CustomerManagedStatus?.Status !== 'DISABLED')
    throw conflict(
      `tenant ${row.tenant_name} is not paused by the reputation policy (status ${current.sending_status ?? 'unknown'})`,
      'mailer_tenant_not_paused',
    );
  await provider.reinstate(row.tenant_arn);
  ctx.log.info('mailer tenant reinstated', { inbox_id: inboxId, tenant: row.tenant_name });
  const after = await provider.reputation(row.tenant_arn);
  return after ? applyStatus(ctx, current, after) : current;
}

/** Deletes the inbox's tenant at the provider, then its rows (inbox or workspace deletion). */
export async function deleteInboxTenant(ctx: Pick<Ctx, 'db' | 'config' | 'sealer' | 'log'>, inboxId: string): Promise<boolean> {
  const row = await ctx.db.selectFrom('mailer_tenants').select(['tenant_name']).where('inbox_id', '=', inboxId).executeTakeFirst();
  if (!row) return false;
  const provider = mailerProvider(ctx);
  if (provider) await provider.deleteTenant(row.tenant_name);
  else ctx.log.warn('mailer tenant left at the provider', { inbox_id: inboxId, tenant: row.tenant_name, reason: 'SVC_MAILER_* are not set' });
  await ctx.db.deleteFrom('mailer_tenants').where('inbox_id', '=', inboxId).execute();
  await ctx.db.deleteFrom('mailer_channels').where('inbox_id', '=', inboxId).execute();
  ctx.log.info('mailer tenant deleted', { inbox_id: inboxId, tenant: row.tenant_name });
  return true;
}

// ---- triggers ----

/**
 * A channel was saved (created, changed or deleted): keep its inbox's tenant (a stored job, run by
 * the server) when the channel sends, or sent until now, through the SES endpoint.
 */
export async function channelSaved(ctx: Pick<Ctx, 'db' | 'clock' | 'config'>, channelId: string, former?: ChannelSavedSignal['former']): Promise<void> {
  if (!ctx.config.mailer) return;
  const endpoint = sesSmtpEndpoint(ctx.config.mailer);
  const ch = await findChannel(ctx.db, channelId);
  const inboxes = new Set<string>();
  if (ch && ch.kind === 'email' && ch.smtp_host?.toLowerCase() === endpoint) inboxes.add(ch.inbox_id);
  if (former && former.smtpHost?.toLowerCase() === endpoint) inboxes.add(former.inboxId);
  // sooner: a saved channel is looked at now, not at the next retry of an earlier failure.
  for (const inboxId of inboxes)
    await enqueue(ctx.db, ctx.clock, { kind: UPKEEP_JOB, payload: { inboxId }, uniqueKey: `${UPKEEP_JOB}:${inboxId}`, sooner: true });
}

/** Broadcasts approved: keep the tenants of the workspace's inboxes that send through the SES endpoint. */
export async function workspaceApproved(ctx: Pick<Ctx, 'db' | 'clock' | 'config'>, workspaceId: string): Promise<number> {
  const m = ctx.config.mailer;
  if (!m) return 0;
  const rows = await smtpChannelsOfWorkspace(ctx.db, workspaceId);
  const candidates = [...new Set(rows.filter((r) => r.smtp_host!.toLowerCase() === sesSmtpEndpoint(m)).map((r) => r.inbox_id))];
  for (const inboxId of candidates)
    await enqueue(ctx.db, ctx.clock, { kind: UPKEEP_JOB, payload: { inboxId }, uniqueKey: `${UPKEEP_JOB}:${inboxId}`, sooner: true });
  return candidates.length;
}

const MAILER_ON_SINCE_KEY = 'mailer_tenants_on_since';
/** server_meta value while the feature is off. */
const MAILER_OFF = 'off';

/**
 * Since when the tenant feature (SVC_MAILER_*) has been on, as this database knows it: `off` is stored
 * while a server runs without the settings; the first server (or job) with them turns it into the
 * time. Never recorded before (an upgrade from a version that kept no record): since always, as then.
 */
export async function mailerOnSince(ctx: Pick<Ctx, 'db' | 'clock' | 'config'>): Promise<string | null> {
  if (!ctx.config.mailer) {
    await ctx.db
      .insertInto('server_meta')
      .values({ key: MAILER_ON_SINCE_KEY, value: MAILER_OFF })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: MAILER_OFF }))
      .execute();
    return null;
  }
  await ctx.db
    .updateTable('server_meta')
    .set({ value: iso(ctx.clock.now()) })
    .where('key', '=', MAILER_ON_SINCE_KEY)
    .where('value', '=', MAILER_OFF)
    .execute();
  const row = await ctx.db.selectFrom('server_meta').select('value').where('key', '=', MAILER_ON_SINCE_KEY).executeTakeFirst();
  return row?.value ?? '';
}

export function mailerTenantJobs(ctx: Ctx): JobKind[] {
  // Stored by every channel save (src/mailer-tenants/reaction.ts), so it runs with or without the mailer settings.
  // A save stored while the feature was off is not acted on when it is turned on ("never writes to the
  // provider at startup"): the operator's `sync` back-fills those channels, a save or an approval acts.
  const saved: JobKind<ChannelSavedJob> = {
    kind: CHANNEL_SAVED_JOB,
    async run({ channelId, former, saved_at }) {
      const since = await mailerOnSince(ctx);
      if (since === null || (saved_at ?? '') < since) return;
      await channelSaved(ctx, channelId, former);
    },
  };
  if (!ctx.config.mailer) return [saved];
  return [
    saved,
    {
      kind: UPKEEP_JOB,
      async run({ inboxId }: { inboxId: string }) {
        const r = await upkeepInbox(ctx, inboxId);
        // Stored on the row; the job tries again on its backoff.
        if (r.error) throw new Error(r.error);
      },
    },
    {
      kind: REFRESH_JOB,
      async run({ inboxId }: { inboxId: string }) {
        await refreshTenant(ctx, inboxId);
      },
    },
    {
      kind: STATUS_JOB,
      everyMs: STATUS_EVERY_MS,
      async run() {
        await readAllStatuses(ctx);
      },
    },
  ];
}
