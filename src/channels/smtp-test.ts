// POST /v1/channels/{id}/smtp-test: reaches the e-mail channel's SMTP account step by step (DNS,
// TCP connect, TLS, authentication) with the settings replies use, sends no mail, and says which
// step failed with the server's answer. The password is opened only for the AUTH command and is
// never part of an answer, a log line or a stored row. Rate limited per channel in the database,
// with the window of the migration's connection test (src/platform/rate-limit.ts).
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import type { Ctx } from '../context.js';
import { channelTransport, hasSmtpAccount, smtpHost } from '../mail/transport.js';
import { iso } from '../platform/clock.js';
import { conflict } from '../platform/errors.js';
import { CONNECTION_TEST_WINDOW, checkWindow, windowStart } from '../platform/rate-limit.js';
import { type ChannelRow, getChannel } from './service.js';

export type SmtpTestStep = 'dns' | 'connect' | 'tls' | 'auth';
const ORDER: SmtpTestStep[] = ['dns', 'connect', 'tls', 'auth'];
const CONNECT_TIMEOUT_MS = 10_000;

export interface SmtpTestResult {
  ok: boolean;
  failed_step: SmtpTestStep | null;
  message: string;
  steps: { step: SmtpTestStep; status: 'ok' | 'failed' | 'skipped'; detail: string | null }[];
}

class StepError extends Error {
  constructor(
    readonly step: SmtpTestStep,
    message: string,
  ) {
    super(message);
  }
}

async function resolve(ctx: Pick<Ctx, 'lookup'>, host: string): Promise<string> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (net.isIP(bare)) return bare;
  let addresses: { address: string }[];
  try {
    addresses = await ctx.lookup(bare);
  } catch (error) {
    throw new StepError('dns', `the name ${host} cannot be resolved (${(error as { code?: string }).code ?? 'lookup failed'})`);
  }
  if (addresses.length === 0) throw new StepError('dns', `the name ${host} has no address`);
  return addresses[0].address;
}

function tcpConnect(address: string, port: number, label: string): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const socket = net.connect({ host: address, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new StepError('connect', `no answer from ${label} within ${CONNECT_TIMEOUT_MS / 1000} s`));
    }, CONNECT_TIMEOUT_MS);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolvePromise();
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(new StepError('connect', `cannot connect to ${label} (${error.code ?? error.message})`));
    });
  });
}

/** nodemailer's error codes → the step that failed (TCP worked already: a socket error under implicit TLS is the handshake). */
function stepOf(error: { code?: string }, tls: string): SmtpTestStep {
  switch (error.code) {
    case 'EAUTH':
    case 'ENOAUTH':
      return 'auth';
    case 'ETLS':
      return 'tls';
    case 'ESOCKET':
    case 'ECONNECTION':
      return tls === 'tls' ? 'tls' : 'connect';
    default:
      return 'connect';
  }
}

function describe(error: { message?: string; response?: string }, password: string | null): string {
  let text = error.response ? `the server answered: ${error.response}` : (error.message ?? String(error));
  if (password) text = text.split(password).join('***');
  return text.replace(/\s+/g, ' ').trim().slice(0, 500);
}

async function runSteps(ctx: Pick<Ctx, 'lookup' | 'sealer' | 'config' | 'db' | 'clock' | 'log'>, channel: ChannelRow): Promise<SmtpTestResult> {
  const steps: SmtpTestResult['steps'] = [];
  const mark = (step: SmtpTestStep, status: 'ok' | 'failed' | 'skipped', detail: string | null = null) => steps.push({ step, status, detail });
  // A channel sending with a sign-in: SVC_OAUTH_SMTP (development and tests) stands in for the provider's server, without TLS.
  const override = channel.smtp_auth !== 'password' ? ctx.config.oauth.smtp : undefined;
  const tls = override ? 'none' : (channel.smtp_tls ?? 'starttls');
  const host = override?.host ?? smtpHost(ctx.config, channel.smtp_host!);
  const port = override?.port ?? channel.smtp_port ?? (tls === 'tls' ? 465 : 587);
  const label = `${channel.smtp_host}:${port}`;
  let failure: StepError | undefined;
  try {
    const address = await resolve(ctx, host);
    mark('dns', 'ok', host === address ? address : `${host} → ${address}`);
    await tcpConnect(address, port, label);
    mark('connect', 'ok', label);
    const transport = channelTransport(ctx, channel, { address });
    try {
      await transport.verify();
    } catch (error) {
      const e = error as { code?: string; message?: string; response?: string };
      const password = channel.smtp_password_sealed ? ctx.sealer.open(channel.smtp_password_sealed) : null;
      throw new StepError(stepOf(e, tls), describe(e, password));
    } finally {
      transport.close();
    }
    mark('tls', tls === 'none' ? 'skipped' : 'ok', tls === 'none' ? 'TLS mode none: the account is used without TLS' : tls === 'tls' ? 'TLS' : 'STARTTLS');
    if (channel.smtp_username || channel.smtp_auth !== 'password') mark('auth', 'ok', channel.smtp_username ?? `${channel.smtp_auth} sign-in`);
    else mark('auth', 'skipped', 'no SMTP user name: mail is sent without authentication');
  } catch (error) {
    failure = error instanceof StepError ? error : new StepError('connect', (error as Error).message);
    // Steps before the failing one that were not marked passed without their own mark (TLS inside verify).
    for (const step of ORDER.slice(0, ORDER.indexOf(failure.step))) if (!steps.some((s) => s.step === step)) mark(step, 'ok');
    mark(failure.step, 'failed', failure.message);
  }
  for (const step of ORDER) if (!steps.some((s) => s.step === step)) mark(step, 'skipped');
  steps.sort((a, b) => ORDER.indexOf(a.step) - ORDER.indexOf(b.step));
  return {
    ok: !failure,
    failed_step: failure?.step ?? null,
    message: failure
      ? `${failure.step} failed: ${failure.message}`
      : `connected to ${label} and ${channel.smtp_username ? 'authenticated' : 'greeted'}; no mail was sent`,
    steps,
  };
}

/** Tests the channel's SMTP account (at most CONNECTION_TEST_WINDOW.limit per channel per window; 429 beyond). */
export async function testChannelSmtp(
  ctx: Pick<Ctx, 'db' | 'clock' | 'lookup' | 'sealer' | 'config' | 'log'>,
  workspaceId: string,
  channelId: string,
): Promise<SmtpTestResult> {
  const channel = await getChannel(ctx, workspaceId, channelId);
  if (!hasSmtpAccount(channel)) throw conflict(`channel ${channel.id} has no SMTP account; set its SMTP host first`, 'smtp_not_configured');
  // The test is stored before it runs, so that parallel requests count against the window too.
  // An internal row id (never shown): the test rows are only counted and updated.
  const testId = randomUUID();
  await ctx.db.transaction().execute(async (trx) => {
    const recent = await trx
      .selectFrom('channel_smtp_tests')
      .select('at')
      .where('channel_id', '=', channel.id)
      .where('at', '>', windowStart(ctx.clock, CONNECTION_TEST_WINDOW))
      .orderBy('at')
      .execute();
    checkWindow(
      ctx.clock,
      CONNECTION_TEST_WINDOW,
      recent.map((r) => r.at),
    );
    await trx.deleteFrom('channel_smtp_tests').where('channel_id', '=', channel.id).where('at', '<=', windowStart(ctx.clock, CONNECTION_TEST_WINDOW)).execute();
    await trx
      .insertInto('channel_smtp_tests')
      .values({ id: testId, channel_id: channel.id, at: iso(ctx.clock.now()), ok: 0, failed_step: null })
      .execute();
  });
  const result = await runSteps(ctx, channel);
  await ctx.db
    .updateTable('channel_smtp_tests')
    .set({ ok: result.ok ? 1 : 0, failed_step: result.failed_step })
    .where('id', '=', testId)
    .execute();
  ctx.log.info('channel smtp test', { channel_id: channel.id, ok: result.ok, failed_step: result.failed_step });
  return result;
}
