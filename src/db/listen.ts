// Postgres LISTEN on a connection of its own (a pooled connection cannot hold a LISTEN): several
// server processes on one database wake each other this way. The connection is opened again after
// it drops (with a growing pause); `onConnected` runs after each (re)connection, since
// notifications sent while it was down are lost and the caller should look for what it missed.
import { createRequire } from 'node:module';
import type pg from 'pg';

export interface Listener {
  close(): Promise<void>;
}

export interface ListenOptions {
  databaseUrl: string;
  channels: readonly string[];
  applicationName?: string;
  onNotification(channel: string, payload: string): void;
  onConnected(): void;
  onError(error: unknown): void;
}

const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 10_000;

/** Resolves once the first LISTEN is in place (or its first attempt failed: it keeps retrying). */
export async function listen(opts: ListenOptions): Promise<Listener> {
  for (const channel of opts.channels) if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
  const { Client } = createRequire(import.meta.url)('pg') as typeof pg;
  let client: pg.Client | undefined;
  let closed = false;
  let retryMs = RETRY_MIN_MS;
  let timer: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    if (closed) return;
    const c = new Client({
      connectionString: opts.databaseUrl,
      connectionTimeoutMillis: 5000,
      ...(opts.applicationName ? { application_name: opts.applicationName } : {}),
    });
    let dropped = false;
    const drop = (error: unknown) => {
      if (dropped) return;
      dropped = true;
      if (client === c) client = undefined;
      c.end().catch(() => {});
      if (closed) return;
      opts.onError(error);
      timer = setTimeout(() => void connect(), retryMs);
      timer.unref();
      retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
    };
    c.on('error', drop);
    c.on('end', () => drop(new Error('the listening connection ended')));
    c.on('notification', (n) => {
      if (opts.channels.includes(n.channel)) opts.onNotification(n.channel, n.payload ?? '');
    });
    try {
      await c.connect();
      for (const channel of opts.channels) await c.query(`listen ${channel}`);
    } catch (error) {
      drop(error);
      return;
    }
    if (closed) {
      await c.end().catch(() => {});
      return;
    }
    client = c;
    retryMs = RETRY_MIN_MS;
    opts.onConnected();
  };

  await connect();
  return {
    async close() {
      closed = true;
      clearTimeout(timer);
      const c = client;
      client = undefined;
      await c?.end().catch(() => {});
    },
  };
}
