// Events recorded by another process (`svc ingest-email` from a mail server's pipe, a command, a
// second server on the same Postgres) are announced in this one too: a cheap poll of the stream
// position (the newest position, an index lookup on both dialects) emits the in-process 'events'
// signal when it moved, so open realtime and widget sockets read them within a fraction of a
// second. Events written here are announced at once anyway (announceEvents); the poll then only
// wakes readers that find nothing new.
import type { Ctx } from '../context.js';
import type { BackgroundPart, RunningPart } from '../platform/background.js';
import { announceEvents, latestSeq } from './service.js';

export const STREAM_POLL_MS = 250;

/** Polls until stopped; the first poll (the starting position) is done when this resolves. */
export async function watchStreamPosition(ctx: Pick<Ctx, 'db' | 'hub' | 'log'>, pollMs = STREAM_POLL_MS): Promise<RunningPart> {
  let seen: number | undefined;
  let failing = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let polling: Promise<void> = Promise.resolve();
  const poll = async () => {
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
  const next = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      polling = poll().finally(next);
    }, pollMs);
    timer.unref();
  };
  await poll();
  next();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await polling;
    },
  };
}

export const eventsBackground: BackgroundPart = {
  name: 'events',
  async start(ctx) {
    return watchStreamPosition(ctx);
  },
};
