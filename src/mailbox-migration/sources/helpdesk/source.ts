// A help-desk migration's source: its reader (Zendesk or Help Scout, from the sealed credentials),
// the pull that reads the provider's export page by page into entries (each page's entries and the
// cursor after it are written in one transaction, so a restart, even after kill -9, reads on from
// the stored cursor and a page read twice adds nothing), and HelpDeskMailbox, the MailSource the
// shared scan, copy and sync read: one folder of every ticket, entries numbered as UIDs in the
// order they were read, rendered as RFC 822 messages (attachments fetched by GET when copied).
import type { Ctx } from '../../../context.js';
import { iso } from '../../../platform/clock.js';
import { conflict, invalid as conflictFree } from '../../../platform/errors.js';
import { charCount } from '../../../platform/text.js';
import { keepsAttachment } from '../../copy/copy.js';
import { logActivity, type MigrationRow, SYSTEM } from '../../store.js';
import type { HeaderFetch, ImapFolder, OpenedFolder } from '../imap.js';
import type { MailSource } from '../mail-source.js';
import { entrySize, type HelpDeskEntry, renderEntry, renderHeaders } from './entry.js';
import { HelpScoutReader } from './help-scout.js';
import type { HttpWait } from './http.js';
import type { HelpDeskReader } from './reader.js';
import { helpDeskAccount, TICKETS_FOLDER } from './store.js';
import { ZendeskReader } from './zendesk.js';

export interface HelpDeskCredentials {
  /** Zendesk */
  subdomain?: string;
  email?: string;
  api_token?: string;
  /** Help Scout */
  app_id?: string;
  app_secret?: string;
}

const SUBDOMAIN = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Checks a help desk's credentials: what goes in the migration row (username, the secret to seal)
 * and the account (Zendesk subdomain). Throws a 400 naming the missing field.
 */
export function helpDeskCredentialsOf(provider: string, input: HelpDeskCredentials): { username: string; secret: string; account: string | null } {
  const need = (v: string | undefined, field: string, max = 320) => {
    const t = v?.trim();
    if (!t || charCount(t) > max || /[\u0000-\u001f]/.test(t)) throw conflictFree(`${field} is required (1 to ${max} printable characters)`);
    return t;
  };
  if (provider === 'zendesk') {
    let sub = need(input.subdomain, 'subdomain', 63).toLowerCase();
    sub = sub.replace(/^https?:\/\//, '').replace(/\.zendesk\.com\/?$/, '');
    if (!SUBDOMAIN.test(sub)) throw conflictFree('subdomain is the name before .zendesk.com (letters, digits and dashes)');
    const email = need(input.email, 'email');
    if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw conflictFree('email must be the agent’s e-mail address');
    return { username: email, secret: need(input.api_token, 'api_token', 200), account: sub };
  }
  return { username: need(input.app_id, 'app_id', 200), secret: need(input.app_secret, 'app_secret', 200), account: null };
}

/** The reader of a migration's help desk, from its sealed credentials. */
export async function openHelpDeskReader(
  ctx: Pick<Ctx, 'db' | 'sealer' | 'lookup' | 'config'>,
  m: MigrationRow,
  onWait?: (w: HttpWait) => void | Promise<void>,
): Promise<HelpDeskReader> {
  if (!m.password_sealed || !m.username)
    throw conflict('the migration has no credentials; connect with PUT /v1/migrations/{id}/credentials first', 'migration_state');
  const secret = ctx.sealer.open(m.password_sealed);
  if (m.provider === 'zendesk') {
    const account = await helpDeskAccount(ctx.db, m.id);
    if (!account?.account) throw conflict('the migration has no Zendesk subdomain; connect with PUT /v1/migrations/{id}/credentials', 'migration_state');
    return new ZendeskReader({ ctx }, { subdomain: account.account, email: m.username, token: secret }, onWait);
  }
  return new HelpScoutReader({ ctx }, { appId: m.username, appSecret: secret }, onWait);
}

/** Reports a wait (rate limit or Retry-After) in the log and the migration's activity log. */
export function waitReporter(ctx: Ctx, m: MigrationRow) {
  return async (w: HttpWait) => {
    ctx.log.info('migration waits for the help desk', { migration_id: m.id, seconds: w.seconds, reason: w.reason, bucket: w.bucket });
    await logActivity({ db: ctx.db, clock: ctx.clock }, m, SYSTEM, 'provider_wait', { seconds: w.seconds, reason: w.reason, limit: w.bucket });
  };
}

/**
 * Reads pages of the provider's export from the stored cursor until the budget is used. Returns
 * 'done' once the export reached its end (the cursor then points after the last change seen).
 */
export async function pullStep(ctx: Ctx, m: MigrationRow, reader: HelpDeskReader, budgetMs: number, opts: { once?: boolean } = {}): Promise<'more' | 'done'> {
  const started = performance.now();
  for (;;) {
    const state = await helpDeskAccount(ctx.db, m.id);
    if (!state) throw conflict('the migration has no help-desk credentials', 'migration_state');
    const page = await reader.page(state.cursor);
    const newEntries = await ctx.db.transaction().execute(async (trx) => {
      const current = await trx.selectFrom('migration_helpdesk_sources').selectAll().where('migration_id', '=', m.id).executeTakeFirst();
      if (!current || current.cursor !== state.cursor) return 0; // read by someone else meanwhile
      const known = new Set<string>();
      const keys = page.entries.map((e) => e.key);
      for (let i = 0; i < keys.length; i += 500) {
        const rows = await trx
          .selectFrom('migration_helpdesk_entries')
          .select('entry_key')
          .where('migration_id', '=', m.id)
          .where('entry_key', 'in', keys.slice(i, i + 500))
          .execute();
        for (const r of rows) known.add(r.entry_key);
      }
      let uid = Number(current.next_uid);
      const rows = page.entries
        .filter((e) => !known.has(e.key))
        .map((e) => ({ migration_id: m.id, uid: uid++, entry_key: e.key, ticket_id: e.ticketId, sent_at: e.sentAt, data: JSON.stringify(e) }));
      for (let i = 0; i < rows.length; i += 100)
        await trx
          .insertInto('migration_helpdesk_entries')
          .values(rows.slice(i, i + 100))
          .execute();
      const agents = [...new Set([...(JSON.parse(current.agents) as string[]), ...page.agents])].slice(0, 5000);
      await trx
        .updateTable('migration_helpdesk_sources')
        .set({
          cursor: page.cursor,
          next_uid: uid,
          agents: JSON.stringify(agents),
          pull_done: page.done ? 1 : current.pull_done,
          pulled_at: iso(ctx.clock.now()),
        })
        .where('migration_id', '=', m.id)
        .execute();
      const skipped = Object.entries(page.skipped);
      if (skipped.length) await logActivity({ db: trx, clock: ctx.clock }, m, SYSTEM, 'source_skipped', Object.fromEntries(skipped));
      return rows.length;
    });
    if (newEntries) ctx.log.info('migration read help-desk entries', { migration_id: m.id, entries: newEntries });
    if (page.done) return 'done';
    if (opts.once || performance.now() - started > budgetMs) return 'more';
  }
}

/** The entries of a help desk as a read-only mailbox of one folder. */
export class HelpDeskMailbox implements MailSource {
  readonly usable = true;

  constructor(
    private readonly ctx: Pick<Ctx, 'db' | 'config'>,
    private readonly m: MigrationRow,
    readonly reader: HelpDeskReader,
    private readonly supportAddress: string,
  ) {}

  async folders(): Promise<ImapFolder[]> {
    // \All: every ticket, and no label of its own (tags are the labels).
    return [{ path: TICKETS_FOLDER, name: 'All tickets', delimiter: null, specialUse: '\\All', noSelect: false }];
  }

  async examine(path: string): Promise<OpenedFolder> {
    if (path !== TICKETS_FOLDER) throw new Error(`a help desk has no folder ${path}`);
    const state = await helpDeskAccount(this.ctx.db, this.m.id);
    const count = await this.ctx.db
      .selectFrom('migration_helpdesk_entries')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('migration_id', '=', this.m.id)
      .executeTakeFirstOrThrow();
    return {
      path,
      uidValidity: `helpdesk-${this.m.provider}-${state?.account ?? this.m.username}`,
      uidNext: Number(state?.next_uid ?? 1),
      exists: Number(count.n),
    };
  }

  async uids(fromUid = 1): Promise<number[]> {
    const rows = await this.ctx.db
      .selectFrom('migration_helpdesk_entries')
      .select('uid')
      .where('migration_id', '=', this.m.id)
      .where('uid', '>=', fromUid)
      .orderBy('uid')
      .execute();
    return rows.map((r) => Number(r.uid));
  }

  private async entries(from: number, to: number): Promise<{ uid: number; entry: HelpDeskEntry }[]> {
    const rows = await this.ctx.db
      .selectFrom('migration_helpdesk_entries')
      .select(['uid', 'data'])
      .where('migration_id', '=', this.m.id)
      .where('uid', '>=', from)
      .where('uid', '<=', to)
      .orderBy('uid')
      .execute();
    return rows.map((r) => ({ uid: Number(r.uid), entry: JSON.parse(r.data) as HelpDeskEntry }));
  }

  async *headers(range: string): AsyncGenerator<HeaderFetch> {
    const [a, b] = range.split(':');
    const from = Number(a);
    const to = b === undefined ? from : b === '*' ? Number.MAX_SAFE_INTEGER : Number(b);
    for (const { uid, entry } of await this.entries(from, to)) {
      yield { uid, flags: ['\\Seen'], internalDate: new Date(entry.sentAt), size: entrySize(entry), headers: await renderHeaders(entry, this.supportAddress) };
    }
  }

  async *sources(uids: number[]): AsyncGenerator<{ uid: number; source: Buffer }> {
    const wanted = new Set(uids);
    const sorted = [...wanted].sort((x, y) => x - y);
    if (sorted.length === 0) return;
    for (const { uid, entry } of await this.entries(sorted[0], sorted[sorted.length - 1])) {
      if (!wanted.has(uid)) continue;
      const bytes = new Map<number, Buffer | null>();
      for (const [i, a] of entry.attachments.entries()) {
        // Attachments over the limit or of an unkept type stay in the help desk (never downloaded).
        const keep = keepsAttachment({ filename: a.name, contentType: a.contentType, size: a.size }, this.ctx.config.attachmentMaxBytes);
        bytes.set(i, keep ? await this.reader.attachment(a) : null);
      }
      yield { uid, source: await renderEntry(entry, { supportAddress: this.supportAddress, attachmentBytes: bytes }) };
    }
  }

  async logout(): Promise<void> {}
}
