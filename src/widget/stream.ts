// A visitor's realtime socket: the team's replies (and status changes) of the conversations the
// session may read, as they happen. While it is open the contact counts as online.

import type { WebSocket } from 'ws';
import { ACCESS_REVOKED, type AccessRevoked } from '../auth/revocation.js';
import { CHANNELS_DELETED, type ChannelsDeleted } from '../channels/service.js';
import { findChannel } from '../channels/store.js';
import type { Ctx } from '../context.js';
import { type EventViewer, latestSeq, readEvents, streamPosition } from '../events/service.js';
import { findPersonById } from '../people/service.js';
import { SocketStream } from '../realtime/socket.js';
import { TYPING_EVENT } from '../typing/service.js';
import { formatVisitorMessage, type VisitorSession, visibleConversationIds } from './service.js';

interface MessageData {
  message: {
    id: string;
    conversation_id: string;
    kind: string;
    direction: 'in' | 'out';
    author: { type: string; member_id?: string | null };
    body: string;
    html?: string | null;
    created_at: string;
    attachments?: { id: string; filename: string; content_type: string; size: number }[];
    details?: { forward?: unknown } | null;
  };
  conversation: { id: string; status: string };
}

export class VisitorStream extends SocketStream {
  private readonly viewer: EventViewer;
  /** The workspace was deleted: its chat keys and visitor sessions stop at once. */
  private readonly revoked = (r: AccessRevoked) => {
    if (!this.open || r.workspaceId !== this.visitor.session.workspace_id) return;
    this.end({ type: 'closed', message: 'this chat is no longer available' }, 4403, 'workspace deleted');
  };
  /** Its chat channel (or the channel's inbox) was deleted: the visitor session stops at once. */
  private readonly channelsDeleted = (d: ChannelsDeleted) => {
    if (this.open && d.channelIds.includes(this.visitor.session.channel_id)) this.closeGone();
  };

  constructor(
    ctx: Ctx,
    ws: WebSocket,
    private readonly visitor: VisitorSession,
    private readonly opts: { after?: number; heartbeatMs?: number } = {},
  ) {
    super(ctx, ws, 'widget stream failed');
    const s = visitor.session;
    this.viewer = { workspaceId: s.workspace_id, inboxIds: [s.inbox_id], admin: false, conversations: true, contacts: false };
  }

  start(): Promise<void> {
    const s = this.visitor.session;
    return this.begin({
      connection: { workspaceId: s.workspace_id, kind: 'contact', subjectId: s.contact_id, inboxId: s.inbox_id },
      after: this.opts.after,
      heartbeatMs: this.opts.heartbeatMs,
      hello: () => ({}),
      signals: [
        [ACCESS_REVOKED, this.revoked],
        [CHANNELS_DELETED, this.channelsDeleted],
      ],
    });
  }

  /** A deletion made by another process (or missed) is seen here. */
  protected async stillValid(): Promise<boolean> {
    const channel = await findChannel(this.ctx.db, this.visitor.session.channel_id).catch(() => ({ id: '' }));
    if (channel) return true;
    this.closeGone();
    return false;
  }

  protected async pass(): Promise<void> {
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
    // A forward went to someone else: never the visitor's to see.
    if (isNote || m.kind !== 'message' || m.details?.forward) return;
    let name: string | null = null;
    if (m.author.type === 'member' && m.author.member_id) {
      const person = await findPersonById(this.ctx, m.author.member_id);
      name = person?.name ?? null;
    }
    const message = formatVisitorMessage(
      {
        id: m.id,
        conversation_id: m.conversation_id,
        direction: m.direction,
        author_type: m.author.type as never,
        body: m.body,
        html: m.html ?? null,
        created_at: m.created_at,
      },
      name,
      m.attachments,
    );
    this.send({ type: 'message', seq, message });
  }

  private closeGone(): void {
    this.end({ type: 'closed', message: 'this chat is no longer available' }, 4403, 'channel deleted');
  }
}
