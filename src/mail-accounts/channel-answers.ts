// What the channel routes add for a channel that sends with a sign-in: the grant shown in the
// channel's answer (never a token), and after a save that chose Google or Microsoft without a
// usable grant of that provider, a new sign-in to open (`sign_in.url`).
import type { Access } from '../auth/access.js';
import type { SmtpAuth } from '../channels/service.js';
import { type ChannelRow, formatChannel, setSignInAccount } from '../channels/service.js';
import type { Ctx } from '../context.js';
import { findGrant, grantsOf } from './grants.js';
import { beginChannelSignIn, requireProviderClient } from './sign-in.js';

/** Before a save that chooses smtp_auth google or microsoft: 409 provider_not_configured without the operator's OAuth client (nothing changes). */
export function checkSmtpAuth(ctx: Pick<Ctx, 'config'>, smtpAuth: SmtpAuth | undefined): void {
  if (smtpAuth === 'google' || smtpAuth === 'microsoft') requireProviderClient(ctx, smtpAuth);
}

export async function formatChannels(ctx: Pick<Ctx, 'db' | 'config'>, channels: ChannelRow[]) {
  const grants = await grantsOf(
    ctx.db,
    channels.filter((c) => c.kind === 'email').map((c) => c.id),
  );
  return channels.map((c) => formatChannel(c, ctx.config, grants.get(c.id)));
}

/**
 * The answer to a create or PATCH of an e-mail channel: with smtp_auth google or microsoft and no
 * usable grant of that provider, a sign-in is started (`sign_in`: provider, url, expires_at); a
 * usable one is kept and its account becomes the SMTP user.
 */
export async function answerAfterSave(ctx: Ctx, access: Access, channel: ChannelRow, account?: string) {
  let grant = channel.kind === 'email' ? await findGrant(ctx.db, channel.id) : undefined;
  if (channel.smtp_auth === 'password' || channel.kind !== 'email') return formatChannel(channel, ctx.config, grant);
  const provider = channel.smtp_auth;
  if (grant && grant.provider === provider && grant.state === 'ok' && !account) {
    if (channel.smtp_username !== grant.account) {
      await setSignInAccount(ctx.db, channel.id, provider, grant.account);
      channel = { ...channel, smtp_username: grant.account };
    }
    return formatChannel(channel, ctx.config, grant);
  }
  const signIn = await beginChannelSignIn(ctx, access, channel, provider, account);
  grant = await findGrant(ctx.db, channel.id);
  return { ...formatChannel(channel, ctx.config, grant), sign_in: signIn };
}

/**
 * After a save that chose reading the mailbox with Google or Microsoft: a sign-in to open when the
 * channel has no usable grant of that provider (unless the answer started one already).
 */
export async function withReadingSignIn<T extends object>(
  ctx: Ctx,
  access: Access,
  channel: ChannelRow,
  answer: T,
  readingKind: string | undefined,
): Promise<T & { sign_in?: Awaited<ReturnType<typeof beginChannelSignIn>> }> {
  if ((readingKind !== 'google' && readingKind !== 'microsoft') || 'sign_in' in answer) return answer;
  const grant = await findGrant(ctx.db, channel.id);
  if (grant && grant.provider === readingKind && grant.state === 'ok') return answer;
  return { ...answer, sign_in: await beginChannelSignIn(ctx, access, channel, readingKind) };
}
