// The readers of this process: every few seconds (and at once when settings change) it takes the
// lease of each reader that no live process holds and that is not waiting to retry, runs a session,
// renews the leases, and stops a session whose lease was lost or whose settings changed. A failure
// is stored first (state, step, the server's words, when to retry: 1 min doubling to 30 min), logged
// once when the state changes, and the lease is let go.
import type { Ctx } from '../context.js';
import { CHANNEL_SIGNED_IN } from '../mail-accounts/sign-in.js';
import { SourceError } from '../mailbox-migration/sources/connect.js';
import type { BackgroundPart, RunningPart } from '../platform/background.js';
import { iso } from '../platform/clock.js';
import { aloneOnDatabase } from '../platform/presence.js';
import { failureOf, readerLogin } from './connection.js';
import { ReaderSession } from './session.js';
import { claimLease, findReader, LEASE_MS, type ReaderRow, readersDue, releaseAllLeases, releaseLease, renewLeases, setReaderState } from './store.js';

/** In-process signal: a reader's settings changed (look now instead of at the next tick). */
export const READER_CHANGED = 'mailbox-reader-changed';
const TICK_MS = 5_000;
const MAX_BACKOFF = 30;

interface Running {
  session: ReaderSession;
  version: string;
  ended: Promise<void>;
}

export class ReaderManager {
  private readonly sessions = new Map<string, Running>();
  private timer: NodeJS.Timeout | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private ticking = false;
  private again = false;
  private stopped = false;
  private readonly onChanged = () => void this.tick();
  // The sign-in's transaction made its reader due (retrySignInReaderNow): look now.
  private readonly onSignedIn = () => void this.tick();

  constructor(private readonly ctx: Ctx) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.renewTimer = setInterval(() => void this.renew(), LEASE_MS / 3);
    this.ctx.hub.on(READER_CHANGED, this.onChanged);
    this.ctx.hub.on(CHANNEL_SIGNED_IN, this.onSignedIn);
    void this.tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearInterval(this.renewTimer);
    this.ctx.hub.off(READER_CHANGED, this.onChanged);
    this.ctx.hub.off(CHANNEL_SIGNED_IN, this.onSignedIn);
    const running = [...this.sessions.values()];
    for (const r of running) r.session.stop();
    await Promise.allSettled(running.map((r) => r.ended));
  }

  /** How many sessions this process runs (tests). */
  get running(): number {
    return this.sessions.size;
  }

  async tick(): Promise<void> {
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = true;
    try {
      do {
        this.again = false;
        if (this.stopped) return;
        const now = this.ctx.clock.now();
        for (const row of await readersDue(this.ctx.db, iso(now), this.ctx.instanceId)) {
          if (this.sessions.has(row.channel_id) || this.stopped) continue;
          if (!(await claimLease(this.ctx.db, row.channel_id, this.ctx.instanceId, iso(now), iso(new Date(now.getTime() + LEASE_MS))))) continue;
          this.startSession(row);
        }
      } while (this.again);
    } catch (error) {
      this.ctx.log.error('mailbox reader: looking for readers failed', { error: (error as Error).message });
    } finally {
      this.ticking = false;
    }
  }

  private async renew(): Promise<void> {
    if (this.sessions.size === 0) return;
    try {
      const until = iso(new Date(this.ctx.clock.now().getTime() + LEASE_MS));
      const held = await renewLeases(this.ctx.db, [...this.sessions.keys()], this.ctx.instanceId, until);
      for (const [id, r] of this.sessions) if (held.get(id) !== r.version) r.session.stop();
    } catch (error) {
      this.ctx.log.error('mailbox reader: renewing leases failed', { error: (error as Error).message });
    }
  }

  private startSession(row: ReaderRow): void {
    const { ctx } = this;
    const me = ctx.instanceId;
    const session = new ReaderSession(ctx, row, async (mode) => {
      const now = iso(ctx.clock.now());
      await setReaderState(ctx.db, row.channel_id, me, {
        state: mode,
        mode,
        error_step: null,
        error_message: null,
        failures: 0,
        retry_at: null,
        connected_at: now,
      });
      if (row.state !== mode) ctx.log.info('mailbox reader connected', { channel_id: row.channel_id, mode });
      row.state = mode;
    });
    const work = async () => {
      const login = await readerLogin(ctx, row);
      try {
        await session.run(login);
      } catch (error) {
        // A refused access token (revoked or expired early at the provider): renewed once, which
        // either logs in or tells that the sign-in itself is refused.
        if (!('accessToken' in login) || session.stopped || !(error instanceof SourceError) || error.step !== 'login') throw error;
        await session.run(await readerLogin(ctx, row, { renew: true }));
      }
    };
    const ended = work().then(
      () => undefined,
      (error: unknown) => error,
    );
    const running: Running = {
      session,
      version: row.updated_at,
      ended: ended.then(async (error) => {
        try {
          const stoppedOnPurpose = this.stopped || session.stopped;
          if (error !== undefined && !stoppedOnPurpose) await this.recordFailure(row, error);
          await releaseLease(ctx.db, row.channel_id, me);
        } catch (e) {
          ctx.log.error('mailbox reader: recording the end of a session failed', { channel_id: row.channel_id, error: (e as Error).message });
        } finally {
          this.sessions.delete(row.channel_id);
          if (!this.stopped) setImmediate(() => void this.tick());
        }
      }),
    };
    this.sessions.set(row.channel_id, running);
  }

  private async recordFailure(row: ReaderRow, error: unknown): Promise<void> {
    const { ctx } = this;
    const current = await findReader(ctx.db, row.channel_id);
    if (!current || current.updated_at !== row.updated_at) return;
    const { step, message } = failureOf(error);
    const failures = current.failures + 1;
    const retryMs = ctx.config.mailboxReader.retryMs;
    const wait = Math.min(retryMs * 2 ** (failures - 1), retryMs * MAX_BACKOFF);
    const retryAt = new Date(ctx.clock.now().getTime() + wait);
    await setReaderState(ctx.db, row.channel_id, ctx.instanceId, {
      state: 'needs_attention',
      mode: null,
      error_step: step,
      error_message: message,
      failures,
      retry_at: iso(retryAt),
    });
    // Said once when the reader stops working, not at every retry.
    if (current.state !== 'needs_attention')
      ctx.log.warn('mailbox reader failed; retrying with backoff', { channel_id: row.channel_id, step, error: message, retry_at: iso(retryAt) });
    else ctx.log.debug('mailbox reader still failing', { channel_id: row.channel_id, step, failures, retry_at: iso(retryAt) });
  }
}

export interface ReaderPart extends RunningPart {
  manager: ReaderManager;
}

export const mailboxReaderBackground: BackgroundPart = {
  name: 'mailbox-reader',
  async start(ctx) {
    // Leases of a process that died (kill -9) belong to nobody when this server is alone.
    if (await aloneOnDatabase(ctx)) await releaseAllLeases(ctx.db);
    const manager = new ReaderManager(ctx);
    manager.start();
    const part: ReaderPart = { manager, stop: () => manager.stop() };
    return part;
  },
};
