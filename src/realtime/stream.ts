// One realtime socket: it sends the viewer's events after the client's cursor in sequence order
// (catch-up and live use the same read, so nothing is skipped or sent twice), then follows new
// events as they are announced; heartbeats keep the connection record fresh and find dead peers.
import type { WebSocket } from 'ws';
import { ACCESS_REVOKED, type AccessRevoked } from '../auth/revocation.js';
import type { Ctx } from '../context.js';
import type { ConnectionKind } from '../db/schema.js';
import { type EventViewer, formatStreamEvent, readEvents } from '../events/service.js';
import { iso } from '../platform/clock.js';
import { SocketStream } from './socket.js';

/** Close code after a cursor_expired frame (4000-4999 are the application's). */
export const CLOSE_CURSOR_EXPIRED = 4410;
/** Close code when the workspace or the account was deleted while connected. */
export const CLOSE_ACCESS_REVOKED = 4403;
const READ_BATCH = 500;
/** Wait for the socket to take a batch before reading more when this much is queued. */
const BUFFERED_HIGH = 1024 * 1024;

export interface StreamOptions {
  viewer: EventViewer;
  after: number | undefined;
  subject: { kind: ConnectionKind; id: string };
  heartbeatMs?: number;
  /** Asked on every heartbeat: false (a revoked key, an ended session) closes the socket. */
  stillAllowed?: () => Promise<boolean>;
  /** The member's session, so that ending it closes the socket at once. */
  sessionId?: string;
}

/** Close code when the credentials stopped being valid during the connection. */
export const CLOSE_UNAUTHORIZED = 4401;

export class RealtimeStream extends SocketStream {
  private live = false;
  private readonly revoked = (r: AccessRevoked) => {
    const member = this.opts.subject.kind === 'member' ? this.opts.subject.id : undefined;
    const mine =
      r.workspaceId === this.opts.viewer.workspaceId ||
      (r.personId !== undefined && r.personId === member) ||
      (r.membership !== undefined && r.membership.workspaceId === this.opts.viewer.workspaceId && r.membership.personId === member) ||
      (r.sessionIds !== undefined && this.opts.sessionId !== undefined && r.sessionIds.includes(this.opts.sessionId));
    if (!mine || !this.open) return;
    const message = r.membership
      ? 'your membership of this workspace ended or changed; reconnect to continue with the access you have now'
      : r.sessionIds
        ? 'the session ended'
        : 'the workspace or the account was deleted';
    this.end({ type: 'access_revoked', message }, CLOSE_ACCESS_REVOKED, 'access revoked');
  };

  constructor(
    ctx: Ctx,
    ws: WebSocket,
    private readonly opts: StreamOptions,
  ) {
    super(ctx, ws, 'realtime stream failed');
  }

  start(): Promise<void> {
    return this.begin({
      connection: { workspaceId: this.opts.viewer.workspaceId, kind: this.opts.subject.kind, subjectId: this.opts.subject.id },
      after: this.opts.after,
      heartbeatMs: this.opts.heartbeatMs,
      hello: (id) => ({ connection_id: id }),
      signals: [[ACCESS_REVOKED, this.revoked]],
    });
  }

  protected async stillValid(): Promise<boolean> {
    if (!this.opts.stillAllowed || (await this.opts.stillAllowed().catch(() => true))) return true;
    this.end({ type: 'unauthorized', message: 'the key or session is no longer valid' }, CLOSE_UNAUTHORIZED, 'unauthorized');
    return false;
  }

  protected override onHeartbeat(): void {
    this.send({ type: 'heartbeat', cursor: this.cursor, time: iso(this.ctx.clock.now()) });
  }

  protected async pass(): Promise<void> {
    for (;;) {
      if (!this.open) return;
      const result = await readEvents(this.ctx, this.opts.viewer, this.cursor, READ_BATCH);
      if (result.expired) {
        const after = this.cursor;
        return this.end(
          { type: 'cursor_expired', after, message: 'events after this cursor are no longer kept; load the current state and reconnect without after' },
          CLOSE_CURSOR_EXPIRED,
          'cursor_expired',
        );
      }
      for (const row of result.events) this.send({ type: 'event', event: formatStreamEvent(row) });
      this.cursor = result.cursor;
      if (this.ws.bufferedAmount > BUFFERED_HIGH) await this.flushed();
      if (!result.more) break;
    }
    if (!this.live && this.open) {
      this.live = true;
      this.send({ type: 'live', cursor: this.cursor });
    }
  }

  /** Resolves once the socket has handed everything queued to the kernel. */
  private flushed(): Promise<void> {
    return new Promise((resolve) => {
      if (!this.open || this.ws.readyState !== this.ws.OPEN) return resolve();
      this.ws.send('{"type":"noop"}', () => resolve());
    });
  }
}
