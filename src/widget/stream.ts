// A visitor's realtime socket: the team's replies (and status changes) of the conversations the
// session may read, as they happen. While it is open the contact counts as online.
import { findPersonById } from '../people/service.js';
import { findChannel } from '../channels/store.js';
import type { WebSocket } from 'ws';
import { ACCESS_REVOKED, type AccessRevoked } from '../auth/revocation.js';
import { CHANNELS_DELETED, type ChannelsDeleted } from '../channels/service.js';
import type { Ctx } from '../context.js';
import { latestSeq, readEvents, streamPosition, type EventViewer } from '../events/service.js';
import { closeConnection, HEARTBEAT_MS, markConnection, touchConnection } from '../realtime/connections.js';
import { TYPING_EVENT } from '../typing/service.js';
import { formatVisitorMessage, visibleConversationIds, type VisitorSession } from './service.js';

interface MessageData {
  message: { id: string; conversation_id: string; kind: string; direction: 'in' | 'out'; author: { type: string; member_id?: string | null }; body: string; created_at: string; attachments?: { id: string; filename: string; content_type: string; size: number }[] };
  conversation: { id: string; status: string };
}

export class VisitorStream {
  private open = true;
  private cursor = 0;
  private pumping = false;
  private again = false;
  private connectionId: string | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private awaitingPong = false;
  private readonly viewer: EventViewer;
  private readonly wake = () => this.pump();
  /** The workspace was deleted: its chat keys and visitor sessions stop at once. */
  private readonly revoked = (r: AccessRevoked) => {
    if (!this.open || r.workspaceId !== this.visitor.session.workspace_id) return;
    this.send({ type: 'closed', message: 'this chat is no longer available' });
    this.ws.close(4403, 'workspace deleted');
    void this.stop();
  };
  /** Its chat channel (or the channel's inbox) was deleted: the visitor session stops at once. */
  private readonly channelsDeleted = (d: ChannelsDeleted) => {
    if (this.open && d.channelIds.includes(this.visitor.session.channel_id)) this.closeGone();
  };

  constructor(
    private readonly ctx: Ctx,
    private readonly ws: WebSocket,
    private readonly visitor: VisitorSession,
    private readonly opts: { after?: number; heartbeatMs?: number } = {},
  ) {
    const s = visitor.session;
    this.viewer = { workspaceId: s.workspace_id, inboxIds: [s.inbox_id], admin: false, conversations: true, contacts: false };
  }

  async start(): Promise<void> {
    this.ws.on('close', () => void this.stop());
    this.ws.on('pong', () => (this.awaitingPong = false));
    this.ctx.hub.on(ACCESS_REVOKED, this.revoked);
    this.ctx.hub.on(CHANNELS_DELETED, this.channelsDeleted);
    const s = this.visitor.session;
    const { id } = await markConnection(this.ctx, { workspaceId: s.workspace_id, kind: 'contact', subjectId: s.contact_id, inboxId: s.inbox_id });
    this.connectionId = id;
    if (!this.open) return void closeConnection(this.ctx, id).catch(() => {});
    this.cursor = this.opts.after ?? (await latestSeq(this.ctx));
    const heartbeatMs = this.opts.heartbeatMs ?? HEARTBEAT_MS;
    this.send({ type: 'hello', cursor: this.cursor, heartbeat_seconds: heartbeatMs / 1000 });
    this.ctx.hub.on('events', this.wake);
    this.heartbeat = setInterval(() => void this.beat(), heartbeatMs);
    this.heartbeat.unref();
    this.pump();
  }

  private async beat(): Promise<void> {
    if (!this.open) return;
    if (this.awaitingPong) return void this.ws.terminate();
    // A deletion made by another process (or missed) is seen here.
    const channel = await findChannel(this.ctx.db, this.visitor.session.channel_id).catch(() => ({ id: '' }));
    if (!channel) return this.closeGone();
    this.awaitingPong = true;
    this.ws.ping();
    if (this.connectionId) await touchConnection(this.ctx, this.connectionId).catch(() => {});
  }

  private pump(): void {
    if (!this.open) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    void (async () => {
      try {
        do {
          this.again = false;
          for (;;) {
            const result = await readEvents(this.ctx, this.viewer, this.cursor, 200);
            if (result.expired) {
              // The visitor reloads its conversations; the stream goes on from now.
              this.cursor = await latestSeq(this.ctx);
              this.send({ type: 'resync', cursor: this.cursor });
              break;
            }
            const relevant = result.events.filter((e) => e.type === 'message.created' || e.type === 'conversation.updated' || e.type === TYPING_EVENT);
            if (relevant.length) {
              const visible = new Set(await visibleConversationIds(this.ctx.db, this.visitor.session));
              for (const row of relevant) await this.sendEvent(row.type, row.is_note === 1, JSON.parse(row.data) as MessageData, visible, streamPosition(row));
            }
            this.cursor = result.cursor;
            if (!result.more || !this.open) break;
          }
        } while (this.again && this.open);
      } catch (error) {
        if (this.open) {
          this.ctx.log.warn('widget stream failed', { error });
          this.ws.close(1011, 'server error');
        }
      } finally {
        this.pumping = false;
      }
    })();
  }

  private async sendEvent(type: string, isNote: boolean, data: MessageData, visible: Set<string>, seq: number) {
    if (!visible.has(data.conversation.id)) return;
    if (type === TYPING_EVENT) {
      const typing = data as unknown as { author: { type: string }; until: string };
      if (typing.author.type === 'member') this.send({ type: 'typing', seq, conversation_id: data.conversation.id, until: typing.until });
      return;
    }
    if (type === 'conversation.updated') {
      this.send({ type: 'conversation', seq, conversation: { id: data.conversation.id, status: data.conversation.status } });
      return;
    }
    const m = data.message;
    if (isNote || m.kind !== 'message') return;
    let name: string | null = null;
    if (m.author.type === 'member' && m.author.member_id) {
      const person = await findPersonById(this.ctx, m.author.member_id);
      name = person?.name ?? null;
    }
    const message = formatVisitorMessage(
      { id: m.id, conversation_id: m.conversation_id, direction: m.direction, author_type: m.author.type as never, body: m.body, created_at: m.created_at },
      name,
      m.attachments,
    );
    this.send({ type: 'message', seq, message });
  }

  private closeGone(): void {
    this.send({ type: 'closed', message: 'this chat is no longer available' });
    this.ws.close(4403, 'channel deleted');
    void this.stop();
  }

  private send(frame: unknown): void {
    if (this.open && this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(frame));
  }

  async stop(): Promise<void> {
    if (!this.open) return;
    this.open = false;
    this.ctx.hub.off('events', this.wake);
    this.ctx.hub.off(ACCESS_REVOKED, this.revoked);
    this.ctx.hub.off(CHANNELS_DELETED, this.channelsDeleted);
    clearInterval(this.heartbeat);
    if (this.connectionId) await closeConnection(this.ctx, this.connectionId).catch(() => {});
  }
}
