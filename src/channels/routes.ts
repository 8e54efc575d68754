import { createRoute, z } from '@hono/zod-openapi';
import { authorize, requireInbox, requireManager } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody, noContent, textUpTo } from '../http/openapi.js';
import { resolveInbox } from '../inboxes/service.js';
import { answerAfterSave, checkSmtpAuth, formatChannels, withReadingSignIn } from '../mail-accounts/channel-answers.js';
import { ReadingInputSchema } from '../mailbox-reader/format.js';
import { checkOneSignIn, prepareReading, readingKindAfter, readingsOf, saveReading } from '../mailbox-reader/service.js';
import { ChannelSchema } from './format.js';
import { createChatChannel, createEmailChannel, deleteChannel, getChannel, listChannels, updateChannel } from './service.js';
import { testChannelSmtp } from './smtp-test.js';

const SmtpAuthSchema = z.enum(['password', 'google', 'microsoft']).openapi({
  description:
    'how the outgoing SMTP account signs in: password (the smtp_* fields), or google / microsoft: mail goes through smtp.gmail.com or smtp.office365.com with AUTH XOAUTH2 and the channel’s sign-in; without a usable sign-in of that provider the answer carries `sign_in.url` to open (valid 15 minutes, single use). 409 provider_not_configured when the operator has not set SVC_GOOGLE_* / SVC_MICROSOFT_*. Choosing google or microsoft again starts a new sign-in when the last one was revoked.',
});

const NewEmail = z
  .object({
    kind: z.literal('email'),
    inbox_id: z.string(),
    name: textUpTo(200, 1),
    address: z.string().min(3).max(254),
    display_name: textUpTo(200).optional(),
    from_address: z.string().max(254).optional(),
    smtp_host: z.string().max(253).optional(),
    smtp_port: z.number().int().min(1).max(65535).optional(),
    tls: z.enum(['starttls', 'tls', 'none']).optional(),
    smtp_username: z.string().max(500).optional(),
    smtp_password: z.string().max(2000).optional(),
    smtp_auth: SmtpAuthSchema.optional(),
    reading: ReadingInputSchema.nullable().optional(),
  })
  .strict();
const NewChat = z
  .object({
    kind: z.literal('chat'),
    inbox_id: z.string(),
    name: textUpTo(200, 1),
    origins: z.array(z.string().max(500)).min(1).max(50),
    allow_anonymous: z.boolean().optional(),
    ask_email_offline: z.boolean().optional(),
    greeting: textUpTo(2000).optional(),
  })
  .strict();

const ChannelPatchSchema = z
  .object({
    name: textUpTo(200, 1).optional(),
    display_name: textUpTo(200).nullable().optional(),
    from_address: z.string().max(254).nullable().optional(),
    smtp_host: z.string().max(253).nullable().optional().openapi({ description: 'null removes the SMTP account (port, TLS mode, user name and password too)' }),
    smtp_port: z.number().int().min(1).max(65535).optional(),
    tls: z.enum(['starttls', 'tls', 'none']).optional(),
    smtp_username: z.string().max(500).nullable().optional(),
    smtp_password: z
      .string()
      .max(2000)
      .nullable()
      .optional()
      .openapi({ description: 'a new password (sealed; answers say only whether one is set); null deletes it; "" is refused' }),
    smtp_auth: SmtpAuthSchema.optional(),
    origins: z.array(z.string().max(500)).min(1).max(50).optional(),
    greeting: textUpTo(2000).nullable().optional(),
    allow_anonymous: z.boolean().optional(),
    ask_email_offline: z.boolean().optional(),
    reading: ReadingInputSchema.nullable().optional(),
  })
  .strict()
  .openapi('ChannelPatch', {
    description:
      'E-mail channels take name, display_name, from_address and the smtp_* and tls fields; chat channels take name, origins, greeting, allow_anonymous and ask_email_offline.',
  });

const SmtpTestSchema = z
  .object({
    ok: z.boolean(),
    failed_step: z.enum(['dns', 'connect', 'tls', 'auth']).nullable(),
    message: z.string(),
    steps: z.array(z.object({ step: z.enum(['dns', 'connect', 'tls', 'auth']), status: z.enum(['ok', 'failed', 'skipped']), detail: z.string().nullable() })),
  })
  .openapi('SmtpTest');

const channelIdParam = z.object({ channelId: idParam('channelId', 'ch_01hxyz') });

export function registerChannelRoutes(app: ApiApp, ctx: Ctx) {
  /** Owners and admins (or keys with workspace:manage reaching the channel's inbox) manage a channel. */
  const managedChannel = async (access: Awaited<ReturnType<typeof requireAccess>>, channelId: string) => {
    requireManager(access, 'workspace:manage');
    const channel = await getChannel(ctx, access.workspaceId, channelId);
    requireInbox(access, channel.inbox_id, 'channel');
    return channel;
  };

  /** The channel's answer with its mailbox-reading settings and reader state (e-mail channels). */
  const withReading = async <T extends object>(ch: { id: string; kind: 'email' | 'chat' }, answer: T) => ({
    ...answer,
    ...(await readingsOf(ctx, [ch])).get(ch.id),
  });

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/channels/{channelId}',
      tags: ['channels'],
      summary: 'Change a channel (owners and admins, or keys with workspace:manage)',
      description:
        'Only the fields of the channel’s kind; a body without any is refused. Saving an e-mail channel whose SMTP host is (or was) the Amazon SES endpoint queues the tenant upkeep, as creating one does. Emits channel.updated on the realtime stream (never the password).',
      security: bearer,
      request: { params: channelIdParam, body: jsonBody(ChannelPatchSchema) },
      responses: { 200: jsonAnswer(ChannelSchema, 'the channel as saved') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      const channel = await managedChannel(access, c.req.valid('param').channelId);
      const { reading, ...b } = c.req.valid('json');
      checkSmtpAuth(ctx, b.smtp_auth);
      const readingKind = await readingKindAfter(ctx, channel.id, reading);
      checkOneSignIn(b.smtp_auth ?? channel.smtp_auth, readingKind);
      // The mailbox is reached (the connection test) before anything is saved.
      const prepared = reading !== undefined ? await prepareReading(ctx, access.workspaceId, channel, reading) : undefined;
      const others = Object.values(b).some((v) => v !== undefined);
      const saved =
        !others && prepared ? channel : await updateChannel(ctx, access.workspaceId, channel.id, { name: b.name, ...mailFields(b), ...chatFields(b) });
      if (prepared) await saveReading(ctx, saved, prepared);
      const answer = b.smtp_auth ? await answerAfterSave(ctx, access, saved) : (await formatChannels(ctx, [saved]))[0];
      return c.json(await withReading(saved, await withReadingSignIn(ctx, access, saved, answer, prepared && readingKind)), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/channels/{channelId}',
      tags: ['channels'],
      summary: 'Delete a channel (owners and admins, or keys with workspace:manage)',
      description:
        'At once: mail to its address and forwarding address gets 550, its chat key and visitor sessions are refused. Its conversations stay in the inbox. Refused with 409 channel_in_use (broadcast_ids, migration_ids) while a scheduled, sending or paused broadcast sends through it or a migration that has not ended moves mail into it.',
      security: bearer,
      request: { params: channelIdParam },
      responses: { 204: noContent('deleted') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      const channel = await managedChannel(access, c.req.valid('param').channelId);
      await deleteChannel(ctx, access.workspaceId, channel.id);
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/channels/{channelId}/smtp-test',
      tags: ['channels'],
      summary: 'Test an e-mail channel’s SMTP account: DNS, TCP connect, TLS, authentication; no mail is sent',
      description:
        'Says which step failed and the server’s answer (never the password). At most 5 tests per channel in 10 minutes (429 with Retry-After beyond). 409 smtp_not_configured without an SMTP host.',
      security: bearer,
      request: { params: channelIdParam },
      responses: { 200: jsonAnswer(SmtpTestSchema, 'the outcome of each step') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      const channel = await managedChannel(access, c.req.valid('param').channelId);
      return c.json(await testChannelSmtp(ctx, access.workspaceId, channel.id), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/channels',
      tags: ['channels'],
      summary: 'Channels of the workspace or of one inbox',
      security: bearer,
      request: { query: z.object({ inbox_id: z.string().optional() }) },
      responses: { 200: jsonAnswer(z.object({ data: z.array(ChannelSchema) }), 'channels') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      const { inbox_id } = c.req.valid('query');
      if (inbox_id) requireInbox(access, inbox_id);
      const rows = (await listChannels(ctx, access.workspaceId, inbox_id)).filter((ch) => access.inboxIds === null || access.inboxIds.includes(ch.inbox_id));
      const readings = await readingsOf(ctx, rows);
      return c.json({ data: (await formatChannels(ctx, rows)).map((ch) => ({ ...ch, ...readings.get(ch.id) })) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/channels',
      tags: ['channels'],
      summary: 'Create an e-mail or chat channel (owners and admins, or keys with workspace:manage)',
      security: bearer,
      request: { body: jsonBody(z.discriminatedUnion('kind', [NewEmail, NewChat])) },
      responses: { 201: jsonAnswer(ChannelSchema, 'the new channel') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'inboxes:manage');
      const b = c.req.valid('json');
      const inbox = await resolveInbox(ctx, access.workspaceId, b.inbox_id);
      requireInbox(access, inbox.id);
      const base = { workspaceId: access.workspaceId, inboxId: inbox.id, name: b.name };
      if (b.kind === 'email') {
        checkSmtpAuth(ctx, b.smtp_auth);
        checkOneSignIn(b.smtp_auth ?? 'password', b.reading?.kind);
      }
      const prepared = b.kind === 'email' && b.reading !== undefined ? await prepareReading(ctx, access.workspaceId, undefined, b.reading) : undefined;
      const channel =
        b.kind === 'email'
          ? await createEmailChannel(ctx, { ...base, address: b.address, ...mailFields(b) })
          : await createChatChannel(ctx, { ...base, ...chatFields(b) });
      if (prepared) await saveReading(ctx, channel, prepared);
      const answer = await answerAfterSave(ctx, access, channel);
      return c.json(await withReading(channel, await withReadingSignIn(ctx, access, channel, answer, b.kind === 'email' ? b.reading?.kind : undefined)), 201);
    },
  );
}

type MailKeys = 'display_name' | 'from_address' | 'smtp_host' | 'smtp_port' | 'tls' | 'smtp_username' | 'smtp_password' | 'smtp_auth';

/** An e-mail channel's fields of a create or PATCH body, named as the service takes them. */
function mailFields<B extends Partial<Record<MailKeys, unknown>>>(
  b: B,
): {
  displayName: B['display_name'];
  fromAddress: B['from_address'];
  smtpHost: B['smtp_host'];
  smtpPort: B['smtp_port'];
  tls: B['tls'];
  smtpUsername: B['smtp_username'];
  smtpPassword: B['smtp_password'];
  smtpAuth: B['smtp_auth'];
} {
  return {
    displayName: b.display_name,
    fromAddress: b.from_address,
    smtpHost: b.smtp_host,
    smtpPort: b.smtp_port,
    tls: b.tls,
    smtpUsername: b.smtp_username,
    smtpPassword: b.smtp_password,
    smtpAuth: b.smtp_auth,
  };
}

/** A chat channel's fields of a create or PATCH body. */
function chatFields<B extends Partial<Record<'origins' | 'greeting' | 'allow_anonymous' | 'ask_email_offline', unknown>>>(
  b: B,
): { origins: B['origins']; greeting: B['greeting']; allowAnonymous: B['allow_anonymous']; askEmailOffline: B['ask_email_offline'] } {
  return { origins: b.origins, greeting: b.greeting, allowAnonymous: b.allow_anonymous, askEmailOffline: b.ask_email_offline };
}
