// The same mail is stored once per inbox, however often and by whichever way it arrives: a relay
// retrying, forwarded and routed at once, in the old mailbox while a migration syncs, imported
// twice, re-sent by the customer's mailer with a new Date. "The same" is decided by mailDigest
// (Message-ID, From, To, Subject and body; the Date only for mail without a Message-ID), not by the
// Message-ID alone: a different message that reuses a Message-ID is stored as well, and the first
// message keeps that Message-ID's place in threading (mail_ids). Mail stored before the Date stopped
// counting is found by its prior digest (InboundMail.priorDigest).

import { sql } from 'kysely';
import { registerMailId, type Tx } from '../conversations/service.js';
import { messageById } from '../conversations/store.js';
import { reusableInsert, reusableQuery } from '../db/reusable-query.js';
import type { Db, MailHeaders } from '../db/schema.js';
import { iso } from '../platform/clock.js';
import type { InboundMail } from './parse.js';
import { insertMailIds } from './store.js';

export interface MailIdentity {
  messageId: string | null;
  digest: string;
  /** The digest the same mail was stored under before (with its Date); null when there is none. */
  priorDigest?: string | null;
  /** The From address. */
  sender: string | null;
}

export function mailIdentity(mail: InboundMail, messageId = mail.messageId): MailIdentity {
  return { messageId, digest: mail.digest, priorDigest: mail.priorDigest, sender: mail.from.address };
}

export interface StoredCopy {
  conversation_id: string;
  message_id: string;
}

/**
 * One statement for both ways a stored copy is found (most mail is new, and then both come back
 * empty): the same digest, or the Message-ID held without a digest (see sameAsUndigested). Built
 * and compiled once; rfc_id = null matches nothing when the mail has no Message-ID.
 */
const storedCopyCandidates = reusableQuery(
  (db, workspaceId: string, inboxId: string, digest: string, priorDigest: string, idWorkspaceId: string, rfcId: string | null, idInboxId: string) =>
    db
      .selectFrom('mail_digests')
      .select(['conversation_id', 'message_id', sql<number>`0`.as('by_id')])
      .where('workspace_id', '=', workspaceId)
      .where('inbox_id', '=', inboxId)
      .where((eb) => eb.or([eb('digest', '=', digest), eb('digest', '=', priorDigest)]))
      .unionAll(
        db
          .selectFrom('mail_ids')
          .select(['conversation_id', 'message_id', sql<number>`1`.as('by_id')])
          .where('workspace_id', '=', idWorkspaceId)
          .where('rfc_id', '=', rfcId as string)
          .where('inbox_id', '=', idInboxId)
          .where('digest', 'is', null),
      ),
);

/** The message an inbox already holds for this mail, if any. */
export async function findStoredCopy(db: Db, target: { workspaceId: string; inboxId: string }, mail: MailIdentity): Promise<StoredCopy | undefined> {
  const rows = await storedCopyCandidates(
    db,
    target.workspaceId,
    target.inboxId,
    mail.digest,
    mail.priorDigest ?? mail.digest,
    target.workspaceId,
    mail.messageId,
    target.inboxId,
  );
  const same = rows.find((r) => Number(r.by_id) === 0);
  if (same) return { conversation_id: same.conversation_id, message_id: same.message_id };
  const byId = mail.messageId ? rows.find((r) => Number(r.by_id) === 1) : undefined;
  return byId && (await sameAsUndigested(db, { message_id: byId.message_id, digest: null }, mail))
    ? { conversation_id: byId.conversation_id, message_id: byId.message_id }
    : undefined;
}

/** Digests or Message-IDs per statement of findStoredCopies. */
const LOOKUP_CHUNK = 500;

/**
 * findStoredCopy for many mails at once (a migration batch's), in one statement per 500 digests
 * and one per 500 Message-IDs: the stored copy of each mail that has one, by its digest.
 */
export async function findStoredCopies(
  db: Db,
  target: { workspaceId: string; inboxId: string },
  mails: readonly MailIdentity[],
): Promise<Map<string, StoredCopy>> {
  const found = new Map<string, StoredCopy>();
  // A mail stored under its prior digest is found by it, and known here by its digest.
  const byPrior = new Map(mails.filter((m) => m.priorDigest).map((m) => [m.priorDigest!, m.digest]));
  const digests = [...new Set(mails.flatMap((m) => (m.priorDigest ? [m.digest, m.priorDigest] : [m.digest])))];
  for (let i = 0; i < digests.length; i += LOOKUP_CHUNK) {
    const rows = await db
      .selectFrom('mail_digests')
      .select(['digest', 'conversation_id', 'message_id'])
      .where('workspace_id', '=', target.workspaceId)
      .where('inbox_id', '=', target.inboxId)
      .where('digest', 'in', digests.slice(i, i + LOOKUP_CHUNK))
      .execute();
    for (const r of rows) {
      const copy = { conversation_id: r.conversation_id, message_id: r.message_id };
      if (byPrior.has(r.digest)) {
        const digest = byPrior.get(r.digest)!;
        if (!found.has(digest)) found.set(digest, copy);
      } else found.set(r.digest, copy);
    }
  }
  const byId = mails.filter((m) => m.messageId && !found.has(m.digest));
  const rfcIds = [...new Set(byId.map((m) => m.messageId!))];
  const holders = new Map<string, StoredCopy>();
  for (let i = 0; i < rfcIds.length; i += LOOKUP_CHUNK) {
    const rows = await db
      .selectFrom('mail_ids')
      .select(['rfc_id', 'conversation_id', 'message_id'])
      .where('workspace_id', '=', target.workspaceId)
      .where('rfc_id', 'in', rfcIds.slice(i, i + LOOKUP_CHUNK))
      .where('inbox_id', '=', target.inboxId)
      .where('digest', 'is', null)
      .execute();
    for (const r of rows) holders.set(r.rfc_id, { conversation_id: r.conversation_id, message_id: r.message_id });
  }
  for (const mail of byId) {
    const holder = holders.get(mail.messageId!);
    if (holder && !found.has(mail.digest) && (await sameAsUndigested(db, { message_id: holder.message_id, digest: null }, mail)))
      found.set(mail.digest, holder);
  }
  return found;
}

/**
 * Whether mail is the message holding its Message-ID in mail_ids without a digest: a reply we sent
 * (the same when it comes back from the address we sent it from, as a copy to ourselves does), or
 * mail stored before digests were kept (there the Message-ID alone decides, as it did then).
 */
async function sameAsUndigested(db: Db, holder: { message_id: string; digest?: string | null }, mail: MailIdentity): Promise<boolean> {
  if (holder.digest != null) return false;
  const sent = await messageById(db, holder.message_id);
  const from = sent?.direction === 'out' && sent.mail_headers ? (JSON.parse(sent.mail_headers) as MailHeaders).from?.address : undefined;
  if (!from) return true;
  return from.toLowerCase() === (mail.sender ?? '').trim().toLowerCase();
}

const insertDigestRow = reusableInsert('mail_digests', (q) => q.onConflict((oc) => oc.columns(['workspace_id', 'inbox_id', 'digest']).doNothing()));

/**
 * Records a stored mail in the caller's transaction: its digest, and its Message-ID for threading
 * unless another message holds that id already. False when the inbox holds the same mail (another
 * transaction stored it meanwhile): the caller must then undo its work.
 */
export async function registerStoredMail(
  tx: Tx,
  input: { workspaceId: string; inboxId: string; conversationId: string; messageId: string; mail: MailIdentity },
): Promise<boolean> {
  const { workspaceId, inboxId, conversationId, messageId, mail } = input;
  const digestStored = await insertDigestRow(tx.db, {
    workspace_id: workspaceId,
    inbox_id: inboxId,
    digest: mail.digest,
    conversation_id: conversationId,
    message_id: messageId,
    created_at: iso(tx.clock.now()),
  });
  if (digestStored !== 1) return false;
  if (!mail.messageId) return true;
  if (await registerMailId(tx, { workspaceId, inboxId, rfcId: mail.messageId, conversationId, messageId, digest: mail.digest })) return true;
  // The id is taken: by mail we sent or stored before digests (perhaps the same message after all),
  // or by a different message reusing it (this one is kept, without taking over the id's threading).
  const holder = await tx.db
    .selectFrom('mail_ids')
    .select(['message_id', 'digest'])
    .where('workspace_id', '=', workspaceId)
    .where('rfc_id', '=', mail.messageId)
    .where('inbox_id', '=', inboxId)
    .executeTakeFirstOrThrow();
  return !(await sameAsUndigested(tx.db, holder, mail));
}

/**
 * registerStoredMail for many mails at once (a migration batch's new conversations), in a few
 * multi-row inserts. False when the inbox holds one of them already; the caller must then undo its
 * work. The mails are distinct (no digest twice); of several with one Message-ID the first takes it.
 */
export async function registerStoredMails(
  tx: Tx,
  inputs: readonly { workspaceId: string; inboxId: string; conversationId: string; messageId: string; mail: MailIdentity }[],
): Promise<boolean> {
  const createdAt = iso(tx.clock.now());
  for (let i = 0; i < inputs.length; i += REGISTER_CHUNK) {
    const chunk = inputs.slice(i, i + REGISTER_CHUNK);
    const digests = await tx.db
      .insertInto('mail_digests')
      .values(
        chunk.map((r) => ({
          workspace_id: r.workspaceId,
          inbox_id: r.inboxId,
          digest: r.mail.digest,
          conversation_id: r.conversationId,
          message_id: r.messageId,
          created_at: createdAt,
        })),
      )
      .onConflict((oc) => oc.columns(['workspace_id', 'inbox_id', 'digest']).doNothing())
      .returning('digest')
      .execute();
    if (digests.length !== chunk.length) return false;
  }
  const withId = inputs.filter((r) => r.mail.messageId);
  for (let i = 0; i < withId.length; i += REGISTER_CHUNK) {
    const chunk = withId.slice(i, i + REGISTER_CHUNK);
    const taken = await insertMailIds(
      tx.db,
      chunk.map((r) => ({
        workspace_id: r.workspaceId,
        inbox_id: r.inboxId,
        rfc_id: r.mail.messageId!,
        conversation_id: r.conversationId,
        message_id: r.messageId,
        digest: r.mail.digest,
        created_at: createdAt,
      })),
    );
    // Each id written went to its first mail; the others ask who holds the id, as registerStoredMail does.
    const first = new Set<string>();
    for (const r of chunk) {
      const rfcId = r.mail.messageId!;
      const isFirst = !first.has(rfcId);
      first.add(rfcId);
      if (isFirst && taken.has(rfcId)) continue;
      const holder = await tx.db
        .selectFrom('mail_ids')
        .select(['message_id', 'digest'])
        .where('workspace_id', '=', r.workspaceId)
        .where('rfc_id', '=', rfcId)
        .where('inbox_id', '=', r.inboxId)
        .executeTakeFirstOrThrow();
      if (await sameAsUndigested(tx.db, holder, r.mail)) return false;
    }
  }
  return true;
}

const REGISTER_CHUNK = 100;
