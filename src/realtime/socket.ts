// What the two event sockets (the team's /v1/realtime and the widget's visitor socket) share: the
// connection record, the heartbeat that keeps it fresh and finds dead peers, the coalescing pump
// that reads events after the cursor, the hub signals they follow, and closing. Each stream adds
// its own frames, its credential check and what a pass of the pump sends.
import type { EventEmitter } from 'node:events';
import type { WebSocket } from 'ws';
import type { Ctx } from '../context.js';
import { latestSeq } from '../events/service.js';
import { Pump } from '../platform/pump.js';
import { closeConnection, HEARTBEAT_MS, markConnection, touchConnection } from './connections.js';

type HubListener = Parameters<EventEmitter['on']>[1];

export abstract class SocketStream {
  protected open = true;
  protected cursor = 0;
  protected connectionId: string | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private awaitingPong = false;
  private readonly listeners: [string, HubListener][] = [];
  private readonly pump: Pump;

  constructor(
    protected readonly ctx: Ctx,
    protected readonly ws: WebSocket,
    /** The warning logged when a pass fails (the socket is then closed with 1011). */
    failureMessage: string,
  ) {
    this.pump = new Pump(() => this.pass(), {
      active: () => this.open,
      onError: (error) => {
        if (!this.open) return;
        this.ctx.log.warn(failureMessage, { error, connection_id: this.connectionId });
        this.ws.close(1011, 'server error');
      },
    });
  }

  /** Opens the stream (the subclass's `begin` with its connection, hello and signals). */
  abstract start(): Promise<void>;

  /** One pass of the pump: send what is after the cursor (the pump repeats it while woken meanwhile). */
  protected abstract pass(): Promise<void>;

  /** Asked first on every heartbeat; a stream whose credential no longer holds closes itself and answers false. */
  protected abstract stillValid(): Promise<boolean>;

  /** Sent on every heartbeat after the ping (the team socket's heartbeat frame). */
  protected onHeartbeat(): void {}

  /**
   * Records the connection, sets the cursor (`after`, or else now), says hello and follows new
   * events. `signals` are hub listeners that live as long as the socket.
   */
  protected async begin(opts: {
    connection: Parameters<typeof markConnection>[1];
    after: number | undefined;
    heartbeatMs: number | undefined;
    hello: (connectionId: string) => Record<string, unknown>;
    signals: [string, HubListener][];
  }): Promise<void> {
    this.ws.on('close', () => void this.stop());
    this.ws.on('pong', () => (this.awaitingPong = false));
    for (const [signal, listener] of opts.signals) this.listen(signal, listener);
    const { id } = await markConnection(this.ctx, opts.connection);
    this.connectionId = id;
    if (!this.open) return void closeConnection(this.ctx, id).catch(() => {});
    this.cursor = opts.after ?? (await latestSeq(this.ctx));
    const heartbeatMs = opts.heartbeatMs ?? HEARTBEAT_MS;
    this.send({ type: 'hello', ...opts.hello(id), cursor: this.cursor, heartbeat_seconds: heartbeatMs / 1000 });
    this.listen('events', () => this.pump.run());
    this.heartbeat = setInterval(() => void this.beat(), heartbeatMs);
    this.heartbeat.unref();
    this.pump.run();
  }

  private listen(signal: string, listener: HubListener): void {
    this.ctx.hub.on(signal, listener);
    this.listeners.push([signal, listener]);
  }

  private async beat(): Promise<void> {
    if (!this.open) return;
    if (!(await this.stillValid())) return;
    if (this.awaitingPong) {
      // No answer to the previous ping within a heartbeat: the peer is gone.
      this.ws.terminate();
      return;
    }
    this.awaitingPong = true;
    this.ws.ping();
    this.onHeartbeat();
    if (this.connectionId) await touchConnection(this.ctx, this.connectionId).catch(() => {});
  }

  /** Sends a last frame, closes with `code` and stops. */
  protected end(frame: unknown, code: number, reason: string): void {
    this.send(frame);
    this.ws.close(code, reason);
    void this.stop();
  }

  protected send(frame: unknown): void {
    if (this.open && this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(frame));
  }

  async stop(): Promise<void> {
    if (!this.open) return;
    this.open = false;
    for (const [signal, listener] of this.listeners) this.ctx.hub.off(signal, listener);
    clearInterval(this.heartbeat);
    if (this.connectionId) await closeConnection(this.ctx, this.connectionId).catch(() => {});
  }
}

/**
 * The WebSocket events of an upgraded request (`upgradeWebSocket`): counts the socket in
 * svc_realtime_connections by `kind`, starts the stream `open` makes (a failed start closes with
 * 1011) and stops it when the socket closes.
 */
export function socketEvents(ctx: Ctx, kind: 'team' | 'widget', failureMessage: string, open: (ws: WebSocket) => SocketStream) {
  let stream: SocketStream | undefined;
  return {
    onOpen(_event: unknown, ws: { raw?: unknown }) {
      ctx.metrics.realtimeConnections.inc({ kind });
      const raw = ws.raw as WebSocket;
      stream = open(raw);
      stream.start().catch((error) => {
        ctx.log.warn(failureMessage, { error });
        raw.close(1011, 'server error');
      });
    },
    onClose() {
      ctx.metrics.realtimeConnections.dec({ kind });
      void stream?.stop();
    },
  };
}
