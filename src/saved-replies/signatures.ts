// Signatures appended to e-mail replies: each member's own (per workspace) and each inbox's.
//
// Rule: an e-mail reply written by a member (signed in, or an API key writing with member_id) gets
// the member's signature, then the inbox's, each after a "-- " line, both rendered with the same
// placeholders as saved replies. Replies by API keys without a member get the inbox's only. Notes
// and chat replies never get one. The signature is added when the reply is stored, so the stored
// body (and html) is exactly what the customer receives.

import { type Access, requireInbox, requireManager, requireScope } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ConversationRow } from '../conversations/format.js';
import type { Db } from '../db/schema.js';
import { inboxByRef } from '../inboxes/store.js';
import { iso } from '../platform/clock.js';
import { forbidden, invalid, notFound } from '../platform/errors.js';
import { charCount } from '../platform/text.js';
import { type Formatted, formattedInput, renderHtmlPlaceholders } from './formatted.js';
import { checkPlaceholders, renderPlaceholders } from './placeholders.js';
import { placeholderValues } from './render.js';

export const MAX_SIGNATURE_CHARS = 2_000;
export const SIGNATURE_DELIMITER = '-- ';
type C = Pick<Ctx, 'db' | 'clock'>;

/** A rendered signature: its text, and its html when it is formatted. */
export interface Signature {
  text: string;
  html: string | null;
}

/** The signature's text and html (`html` wins over `body`); '' and null when it is removed. */
function checkSignature(input: { body?: string; html?: string }): Formatted {
  const given = formattedInput(input);
  const text = checkSignatureText(given.body);
  return { body: text, html: text ? given.html : null };
}

function checkSignatureText(body: string): string {
  const text = body.replace(/\r\n?/g, '\n').replace(/\s+$/, '');
  if (charCount(text) > MAX_SIGNATURE_CHARS)
    throw invalid(`signature must be at most ${MAX_SIGNATURE_CHARS} characters`, {
      issues: [{ path: ['body'], message: `at most ${MAX_SIGNATURE_CHARS} characters` }],
    });
  checkPlaceholders(text, 'body');
  return text;
}

export function memberOf(access: Access): string {
  if (access.actor.kind !== 'member') throw forbidden('signatures belong to members; API keys have none');
  return access.actor.personId;
}

export async function getMemberSignature(ctx: C, access: Access) {
  const personId = memberOf(access);
  const row = await ctx.db
    .selectFrom('member_signatures')
    .select(['body', 'html', 'updated_at'])
    .where('workspace_id', '=', access.workspaceId)
    .where('person_id', '=', personId)
    .executeTakeFirst();
  return { body: row?.body ?? '', html: row?.html ?? null, updated_at: row?.updated_at ?? null };
}

/** Sets the caller's signature in this workspace; an empty body removes it. */
export async function setMemberSignature(ctx: C, access: Access, input: { body?: string; html?: string }) {
  const personId = memberOf(access);
  const { body: text, html } = checkSignature(input);
  const now = iso(ctx.clock.now());
  const key = { workspace_id: access.workspaceId, person_id: personId };
  if (!text) {
    await ctx.db.deleteFrom('member_signatures').where('workspace_id', '=', key.workspace_id).where('person_id', '=', personId).execute();
    return { body: '', html: null, updated_at: null };
  }
  await ctx.db
    .insertInto('member_signatures')
    .values({ ...key, body: text, html, updated_at: now })
    .onConflict((oc) => oc.columns(['workspace_id', 'person_id']).doUpdateSet({ body: text, html, updated_at: now }))
    .execute();
  return { body: text, html, updated_at: now };
}

async function inboxFor(db: Db, access: Access, inboxId: string) {
  const inbox = await inboxByRef(db, access.workspaceId, inboxId, { live: false });
  if (!inbox) throw notFound('inbox');
  requireInbox(access, inbox.id);
  return inbox;
}

/** Members who reach the inbox; keys with conversations:read (what they write replies with). */
export async function getInboxSignature(ctx: C, access: Access, inboxId: string) {
  if (access.actor.kind === 'api_key') requireScope(access, 'conversations:read');
  const inbox = await inboxFor(ctx.db, access, inboxId);
  const row = await ctx.db.selectFrom('inbox_signatures').select(['body', 'html', 'updated_at']).where('inbox_id', '=', inbox.id).executeTakeFirst();
  return { inbox_id: inbox.id, body: row?.body ?? '', html: row?.html ?? null, updated_at: row?.updated_at ?? null };
}

/** Owners and admins (or keys with workspace:manage) set an inbox's signature; empty removes it. */
export async function setInboxSignature(ctx: C, access: Access, inboxId: string, input: { body?: string; html?: string }) {
  requireManager(access, 'workspace:manage');
  const inbox = await inboxFor(ctx.db, access, inboxId);
  const { body: text, html } = checkSignature(input);
  const now = iso(ctx.clock.now());
  if (!text) {
    await ctx.db.deleteFrom('inbox_signatures').where('inbox_id', '=', inbox.id).execute();
    return { inbox_id: inbox.id, body: '', html: null, updated_at: null };
  }
  await ctx.db
    .insertInto('inbox_signatures')
    .values({ inbox_id: inbox.id, workspace_id: inbox.workspace_id, body: text, html, updated_at: now })
    .onConflict((oc) => oc.column('inbox_id').doUpdateSet({ body: text, html, updated_at: now }))
    .execute();
  return { inbox_id: inbox.id, body: text, html, updated_at: now };
}

/** The rendered signatures for an e-mail reply in `conversation` by `personId` (null: no member); [] when none. */
export async function replySignatures(db: Db, conversation: ConversationRow, personId: string | null): Promise<Signature[]> {
  const [member, inbox] = await Promise.all([
    personId
      ? db
          .selectFrom('member_signatures')
          .select(['body', 'html'])
          .where('workspace_id', '=', conversation.workspace_id)
          .where('person_id', '=', personId)
          .executeTakeFirst()
      : undefined,
    db.selectFrom('inbox_signatures').select(['body', 'html']).where('inbox_id', '=', conversation.inbox_id).executeTakeFirst(),
  ]);
  const rows = [member, inbox].filter((r): r is { body: string; html: string | null } => !!r?.body);
  if (!rows.length) return [];
  const values = await placeholderValues(db, conversation, personId);
  return rows
    .map((r) => ({ text: renderPlaceholders(r.body, values).trim(), html: r.html === null ? null : renderHtmlPlaceholders(r.html, values) }))
    .filter((s) => s.text);
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

const textSignatures = (signatures: Signature[]) => `\n\n${signatures.map((s) => `${SIGNATURE_DELIMITER}\n${s.text}`).join('\n\n')}`;
// A formatted signature keeps its own blocks after the "-- " line; a plain one is its lines.
const htmlSignatures = (signatures: Signature[]) =>
  signatures
    .map((s) =>
      s.html === null
        ? `<div class="svc-signature"><p>${escapeHtml(SIGNATURE_DELIMITER)}<br>${escapeHtml(s.text).replace(/\n/g, '<br>')}</p></div>`
        : `<div class="svc-signature"><p>${escapeHtml(SIGNATURE_DELIMITER)}</p>${s.html}</div>`,
    )
    .join('');

/** The reply's text (and html, when it has one) with the signatures after a "-- " line each. */
export function withSignatures(body: string, html: string | null, signatures: Signature[]): { body: string; html: string | null } {
  if (!signatures.length) return { body, html };
  return { body: `${body.replace(/\s+$/, '')}${textSignatures(signatures)}`, html: html === null ? null : `${html}${htmlSignatures(signatures)}` };
}

/** What was written before `withSignatures` added these signatures (unchanged when it does not end with them). */
export function withoutSignatures(body: string, html: string | null, signatures: Signature[]): { body: string; html: string | null } {
  if (!signatures.length) return { body, html };
  const text = textSignatures(signatures);
  const marked = htmlSignatures(signatures);
  return {
    body: body.endsWith(text) ? body.slice(0, -text.length) : body,
    html: html?.endsWith(marked) ? html.slice(0, -marked.length) : html,
  };
}
