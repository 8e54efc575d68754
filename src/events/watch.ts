// Events recorded by another process (`svc ingest-email` from a mail server's pipe, a command, a
// second server on the same Postgres) are announced in this one too: a cheap read of the stream
// position (the newest position, an index lookup on both dialects) emits the in-process 'events'
// signal when it moved, so open realtime and widget sockets read them at once. Events written here
// are announced at once anyway (announceEvents).
//
// On Postgres every transaction that writes events notifies `svc_events` at commit (migration
// 0021), so the position is read as soon as another process commits; the timed poll is only the
// fallback (for notifications lost while the listening connection was down). On SQLite (one
// server; commands beside it) the poll is what finds other writers. In-process signals that other
// processes' sockets must hear too (access revoked, channels deleted) are relayed on `svc_signals`.
import { sql } from 'kysely';
import { applicationName, type Ctx } from '../context.js';
import { isPostgres } from '../db/dialect.js';
import { type Listener, listen } from '../db/listen.js';
import type { BackgroundPart, RunningPart } from '../platform/background.js';
import { Pump } from '../platform/pump.js';
import { announceEvents, latestSeq } from './service.js';

/** The poll when nothing else wakes this process (SQLite, or the listening connection is down). */
export const STREAM_POLL_MS = 250;
/** The fallback poll while Postgres notifications arrive. */
export const NOTIFIED_POLL_MS = 5_000;
export const EVENTS_CHANNEL = 'svc_events';
export const SIGNALS_CHANNEL = 'svc_signals';
/** Postgres refuses notification payloads of 8000 bytes and more; a larger signal is left to the sockets' heartbeat checks. */
const MAX_SIGNAL_BYTES = 7900;

type WatchCtx = Pick<Ctx, 'db' | 'hub' | 'log' | 'config' | 'instanceId'>;

export interface WatchOptions {
  pollMs?: number;
  notifiedPollMs?: number;
  /** Hub signals to repeat in the other processes (Postgres only). */
  relayedSignals?: readonly string[];
}

/** Polls (and listens, on Postgres) until stopped; the first read of the position is done when this resolves. */
export async function watchStreamPosition(ctx: WatchCtx, opts: WatchOptions = {}): Promise<RunningPart> {
  const pollMs = opts.pollMs ?? STREAM_POLL_MS;
  const notifiedPollMs = opts.notifiedPollMs ?? NOTIFIED_POLL_MS;
  let seen: number | undefined;
  let failing = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let listening = false;
  const read = async () => {
    try {
      const position = await latestSeq(ctx);
      if (seen !== undefined && position > seen) announceEvents(ctx);
      seen = position;
      failing = false;
    } catch (error) {
      if (!failing) ctx.log.warn('event stream position unavailable', { error });
      failing = true;
    }
  };
  let reading: Promise<void> = Promise.resolve();
  // Notifications come in bursts: one read at a time, and one more after it for those that came meanwhile.
  const pump = new Pump(() => (reading = read()), { active: () => !stopped, onError: () => {} });
  const next = () => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(
      () => {
        pump.run();
        next();
      },
      listening ? notifiedPollMs : pollMs,
    );
    timer.unref();
  };
  await read();

  let listener: Listener | undefined;
  let unrelay = () => {};
  const databaseUrl = ctx.config.databaseUrl;
  if (databaseUrl && isPostgres(ctx.db)) {
    const mine = applicationName(ctx.instanceId);
    const relay = signalRelay(ctx, mine, opts.relayedSignals ?? []);
    unrelay = relay.stop;
    listener = await listen({
      databaseUrl,
      channels: [EVENTS_CHANNEL, SIGNALS_CHANNEL],
      applicationName: mine,
      onNotification: (channel, payload) => {
        // This process's own commits were announced when they were made.
        if (channel === EVENTS_CHANNEL && payload !== mine) pump.run();
        if (channel === SIGNALS_CHANNEL) relay.receive(payload);
      },
      onConnected: () => {
        listening = true;
        pump.run(); // what was committed while not listening
        next();
      },
      onError: (error) => {
        listening = false;
        ctx.log.warn('event notifications unavailable; polling meanwhile', { error });
        next();
      },
    });
  }
  next();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      unrelay();
      await listener?.close();
      await reading;
    },
  };
}

/**
 * Repeats the named hub signals in the other server processes: a signal emitted here is sent as a
 * notification (JSON: sender, name, payload; ids only, never secrets), and one received from
 * another process is emitted on this hub (and not sent back).
 */
function signalRelay(ctx: WatchCtx, mine: string, names: readonly string[]) {
  const received = new WeakSet<object>();
  const senders: [string, (payload: unknown) => void][] = names.map((name) => [
    name,
    (payload: unknown) => {
      if (payload && typeof payload === 'object' && received.has(payload)) return;
      const text = JSON.stringify({ from: mine, name, payload });
      if (Buffer.byteLength(text) > MAX_SIGNAL_BYTES) return;
      sql`select pg_notify(${SIGNALS_CHANNEL}, ${text})`.execute(ctx.db).catch((error) => ctx.log.warn('signal not relayed', { error, signal: name }));
    },
  ]);
  for (const [name, send] of senders) ctx.hub.on(name, send);
  return {
    receive(text: string) {
      let message: { from?: unknown; name?: unknown; payload?: unknown };
      try {
        message = JSON.parse(text);
      } catch {
        return;
      }
      if (message.from === mine || typeof message.name !== 'string' || !names.includes(message.name)) return;
      if (!message.payload || typeof message.payload !== 'object') return;
      received.add(message.payload);
      ctx.hub.emit(message.name, message.payload);
    },
    stop() {
      for (const [name, send] of senders) ctx.hub.off(name, send);
    },
  };
}

export function eventsBackground(relayedSignals: readonly string[] = []): BackgroundPart {
  return {
    name: 'events',
    async start(ctx) {
      return watchStreamPosition(ctx, { relayedSignals });
    },
  };
}
