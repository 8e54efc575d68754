// Forwarding a message by mail (issue 33): a new outbound message in the same conversation with a
// `Fwd:` subject, the team's note on top (signed as a reply is), then the original's headers quoted as
// mail clients do (From, Date, Subject, To, Cc) and its text; its attachments copied when asked
// (inline images always, so the quoted html keeps them). The forward answers nothing (no In-Reply-To),
// but its Message-ID is registered, so an answer to it threads back into this conversation (as a
// thread joiner's mail: it does not change where replies go). Forward recipients are not made
// participants: a forward hands a message on, it does not widen the conversation's reply-all.
// A chat message can be forwarded too, through the inbox's first e-mail channel.

import type { Access } from '../auth/access.js';
import { loadContactView } from '../contacts/store.js';
import type { Ctx } from '../context.js';
import type { MailHeaders } from '../db/schema.js';
import { inTransaction } from '../db/transaction.js';
import { announceEvents } from '../events/service.js';
import { outboundMessageId, replyHeaders, scheduleEmailSend } from '../mail/outbound.js';
import { sanitizeMailHtml } from '../mail/sanitize.js';
import { isMemberOf } from '../members/store.js';
import { peopleByIds } from '../people/store.js';
import { invalid, notFound } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { replySignatures, withSignatures } from '../saved-replies/signatures.js';
import { fieldError, namedRecipients, sendingChannel, teamText } from './compose.js';
import { attachmentKey } from './files.js';
import { type ConversationRow, formatMailHeaders, formatMessage, type MessageRow } from './format.js';
import { parseSendAt, scheduleSendLater } from './send-later.js';
import { appendMessage, authorFromAccess, getConversationFor, type NewMessage, registerMailId, type StoredAttachment } from './service.js';
import { attachmentsOf, findMessage } from './store.js';

export interface ForwardInput {
  messageId: string;
  to: string[];
  cc?: string[];
  bcc?: string[];
  body?: string;
  html?: string;
  /** Default true. Inline images of the quoted html are copied in any case. */
  includeAttachments?: boolean;
  /** Unsent uploads of this conversation (pictures the note shows go as inline parts). */
  attachmentIds?: string[];
  memberId?: string;
  /** Undo send / send later (./send-later.ts). */
  sendAt?: string;
}

type Address = { name: string | null; address: string };

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);
const mailbox = (a: Address) => (a.name && a.address ? `${a.name} <${a.address}>` : a.name || a.address);
const textHtml = (text: string) =>
  text
    .split(/\n{2,}/)
    .map((p) => `<p>${escapeHtml(p).replace(/\n/g, '<br>')}</p>`)
    .join('');

/** `Fwd: ` once in front of the subject. */
export function forwardSubject(subject: string | null): string {
  const s = (subject ?? '').trim();
  return /^(fwd?|fw)\s*:/i.test(s) ? s : `Fwd: ${s}`.trim();
}

/** The date as mail headers write it (RFC 5322, UTC). */
function mailDate(at: string): string {
  return new Date(at).toUTCString().replace('GMT', '+0000');
}

/** The original's From, To, Cc and Subject: its mail headers, or for chat and notes who wrote it. */
async function originalHeaders(ctx: Pick<Ctx, 'db'>, conversation: ConversationRow, m: MessageRow): Promise<Omit<MailHeaders, 'in_reply_to' | 'references'>> {
  const mail = formatMailHeaders(m);
  if (mail?.from) return { ...mail, subject: mail.subject ?? conversation.subject };
  let from: Address | null = null;
  if (m.author_contact_id) {
    const contact = await loadContactView(ctx.db, conversation.workspace_id, m.author_contact_id);
    // A chat visitor may have given an address not confirmed yet, or only a name.
    const address = contact?.emails[0] ?? contact?.contact.unverified_email ?? '';
    if (contact && (address || contact.contact.name)) from = { name: contact.contact.name, address };
  } else if (m.author_person_id) {
    const person = (await peopleByIds(ctx.db, [m.author_person_id])).get(m.author_person_id);
    if (person) from = { name: person.name, address: person.email };
  }
  return { message_id: mail?.message_id ?? null, from, to: mail?.to ?? [], cc: mail?.cc ?? [], subject: m.subject ?? conversation.subject };
}

/** The quoted block as text and html (the original's html when it has one). */
function quoted(h: Awaited<ReturnType<typeof originalHeaders>>, m: MessageRow): { text: string; html: string } {
  const lines: [string, string][] = [];
  if (h.from) lines.push(['From', mailbox(h.from)]);
  lines.push(['Date', mailDate(m.created_at)]);
  lines.push(['Subject', h.subject ?? '']);
  if (h.to.length) lines.push(['To', h.to.map(mailbox).join(', ')]);
  if (h.cc.length) lines.push(['Cc', h.cc.map(mailbox).join(', ')]);
  const rule = '---------- Forwarded message ---------';
  const text = [rule, ...lines.map(([k, v]) => `${k}: ${v}`), '', m.body].join('\n');
  const html =
    `<div class="svc-forwarded"><p>${escapeHtml(rule)}<br>${lines.map(([k, v]) => `${k}: ${escapeHtml(v)}`).join('<br>')}</p>` +
    `${m.html ?? textHtml(m.body)}</div>`;
  return { text, html };
}

/** Copies the files to forward under new keys (the forward owns its copies: retention treats them apart). */
async function copyFiles(
  ctx: Ctx,
  workspaceId: string,
  files: readonly { filename: string; content_type: string; storage_key: string; content_id: string | null; inline: number }[],
) {
  const out: StoredAttachment[] = [];
  try {
    for (const f of files) {
      const id = newId('att');
      const key = attachmentKey(workspaceId, id);
      const stored = await ctx.storage.put(key, await ctx.storage.get(f.storage_key), { contentType: f.content_type });
      out.push({
        id,
        filename: f.filename,
        contentType: f.content_type,
        size: stored.size,
        sha256: stored.sha256,
        storageKey: key,
        contentId: f.content_id,
        inline: f.inline === 1,
      });
    }
  } catch (error) {
    await removeFiles(ctx, out);
    throw error;
  }
  return out;
}

async function removeFiles(ctx: Ctx, files: readonly StoredAttachment[]) {
  for (const f of files) await ctx.storage.delete(f.storageKey).catch(() => undefined);
}

export async function forwardMessage(ctx: Ctx, access: Access, conversationId: string, input: ForwardInput) {
  if (input.memberId && access.actor.kind === 'member') throw invalid('member_id is for API keys; members write as themselves');
  // Authorized first: an unknown or unreachable conversation or message is 404 whatever the body says.
  const before = await getConversationFor(ctx, access, conversationId);
  const original = await findMessage(ctx.db, before.id, input.messageId);
  if (!original) throw notFound('message');
  if (original.kind !== 'message') throw fieldError('message_id', 'only messages can be forwarded (not notes or events)');
  const note = teamText(input, { required: false });
  const sendAt = parseSendAt(input.sendAt, ctx.clock.now());
  const channel = await sendingChannel(ctx.db, { inboxId: before.inbox_id, channelId: before.channel_id });
  const recipients = await namedRecipients(ctx.db, before.workspace_id, { to: input.to, cc: input.cc, bcc: input.bcc });
  if (input.memberId && !(await isMemberOf(ctx.db, access.workspaceId, input.memberId))) {
    throw invalid(`member_id ${input.memberId} is not a member of this workspace`);
  }
  const headers = await originalHeaders(ctx, before, original);
  const include = input.includeAttachments ?? true;
  const originals = ((await attachmentsOf(ctx.db, [original.id])).get(original.id) ?? []).filter((f) => include || f.inline === 1);
  const files = await copyFiles(ctx, before.workspace_id, originals);
  try {
    const result = await inTransaction(ctx.db, async (trx) => {
      const tx = { db: trx, clock: ctx.clock };
      const conversation = await getConversationFor(tx, access, conversationId);
      const id = newId('m', ctx.clock.now().getTime());
      const author = authorFromAccess(access, input.memberId);
      const signatures = await replySignatures(trx, conversation, author.type === 'member' ? author.personId : null);
      const signed = withSignatures(note.body, note.html ?? (original.html || note.body.trim() ? textHtml(note.body) : null), signatures);
      const block = quoted(headers, original);
      const top = signed.body.trim();
      const body = top ? `${top}\n\n${block.text}` : block.text;
      const html = original.html || note.html ? sanitizeMailHtml(`${top ? (signed.html ?? '') : ''}${block.html}`) : null;
      // A chat has no subject: the start of the message stands in, as a mail client would need one.
      const subject = forwardSubject(headers.subject || original.body.replace(/\s+/g, ' ').trim().slice(0, 78));
      const mail = { messageId: outboundMessageId(id, channel), references: [] as string[] };
      const message: NewMessage = {
        id,
        kind: 'message',
        direction: 'out',
        author,
        body,
        html,
        subject,
        deliveryStatus: 'pending',
        sendAt,
        details: { forward: { message_id: original.id } },
        forwardedMessageId: original.id,
        files,
        attachmentIds: input.attachmentIds,
        mail: {
          ...mail,
          headers: await replyHeaders(trx, conversation, channel, { ...mail, subject, subjectAsIs: true }, recipients),
          bcc: recipients.bcc,
        },
      };
      const appended = await appendMessage(tx, { conversation, message });
      await registerMailId(tx, {
        workspaceId: conversation.workspace_id,
        inboxId: conversation.inbox_id,
        rfcId: mail.messageId,
        conversationId: conversation.id,
        messageId: id,
      });
      if (sendAt) await scheduleSendLater(tx, id, sendAt);
      else await scheduleEmailSend(tx, id);
      return appended;
    });
    announceEvents(ctx);
    ctx.jobs.wake();
    return formatMessage(result.message, result.attachments, { bcc: true });
  } catch (error) {
    await removeFiles(ctx, files);
    throw error;
  }
}
