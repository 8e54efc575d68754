// The one way svc talks IMAP: an imapflow client whose every command is checked before it is
// written to the socket. Only CAPABILITY, NOOP, LOGOUT, STARTTLS, LOGIN, AUTHENTICATE, LIST,
// STATUS, EXAMINE, UNSELECT, SEARCH and FETCH of items that do not mark messages pass (the
// spec's list, and nothing more); anything else closes the connection before a byte of it is sent
// and is recorded, so that a bug anywhere in this program or in imapflow cannot change the old
// mailbox.
//
// imapflow sends some commands on its own; they are switched off or routed through the check:
//  - ID (sent after CAPABILITY and LOGIN when advertised) is switched off. It is not on the spec's
//    list, and the providers we offer accept EXAMINE without it. (NetEase's 163/126 refuse to open
//    folders for clients that did not send ID; they are not offered as presets, and a migration
//    pointed at them fails at the "list" step of the connection test with the server's answer.)
//  - COMPRESS, ENABLE and IDLE are switched off (disableCompression, disableAutoEnable,
//    disableAutoIdle) and removed from the client's command table as well.
//  - NAMESPACE is answered with imapflow's own fallback, LIST "" "".
//  - SELECT: folders are only ever opened read-only, which imapflow sends as EXAMINE; a SELECT
//    would be refused by the check.
//  - XLIST and LSUB: folder listing runs with listOnly (no LSUB) on a client that does not see
//    the XLIST capability, so plain LIST is used.
import type { FetchMessageObject, ImapFlow, ListResponse } from 'imapflow';
import { specialUse } from 'imapflow/lib/special-use.js';

/** Commands that may reach the server (UID FETCH and UID SEARCH are FETCH and SEARCH). */
export const ALLOWED_COMMANDS: ReadonlySet<string> = new Set([
  'CAPABILITY',
  'NOOP',
  'LOGOUT',
  'STARTTLS',
  'LOGIN',
  'AUTHENTICATE',
  'LIST',
  'STATUS',
  'EXAMINE',
  'UNSELECT',
  'SEARCH',
  'FETCH',
]);

/**
 * FETCH items that never set \Seen or change anything: flags, sizes, dates, structure, envelope,
 * ids, and body sections only in their .PEEK form. Never BODY[…], BINARY[…], RFC822 or RFC822.TEXT.
 */
export const NON_MARKING_FETCH_ITEMS: ReadonlySet<string> = new Set([
  'UID',
  'FLAGS',
  'INTERNALDATE',
  'RFC822.SIZE',
  'RFC822.HEADER',
  'ENVELOPE',
  'BODYSTRUCTURE',
  'BODY.PEEK',
  'BINARY.PEEK',
  'BINARY.SIZE',
  'MODSEQ',
  'EMAILID',
  'THREADID',
  'SAVEDATE',
  'X-GM-MSGID',
  'X-GM-THRID',
  'X-GM-LABELS',
]);

/** FETCH modifiers that only narrow what is returned. */
const FETCH_MODIFIERS = new Set(['CHANGEDSINCE', 'VANISHED']);

/** imapflow's extras that never run on a read-only connection. */
const SWITCHED_OFF = ['ID', 'COMPRESS', 'ENABLE', 'IDLE'];

type Attribute = { type?: string; value?: unknown; section?: unknown; partial?: unknown } | Attribute[] | null | undefined;

function atomValue(a: Attribute): string | undefined {
  if (!a || Array.isArray(a)) return undefined;
  return typeof a.value === 'string' ? a.value.toUpperCase() : undefined;
}

/** Why a FETCH's item list is refused, or undefined when every item is non-marking. */
function checkFetchItems(items: Attribute): string | undefined {
  const list = Array.isArray(items) ? items : [items];
  if (list.length === 0) return 'FETCH without items';
  for (const item of list) {
    const name = atomValue(item as Attribute);
    if (!name) return 'FETCH item that is not a plain name';
    if (!NON_MARKING_FETCH_ITEMS.has(name)) return `FETCH item ${name} may mark messages or is not allowed`;
    // atomValue answered, so the item is a plain object.
    const withSection = (item as { section?: unknown }).section !== undefined;
    if (withSection && !['BODY.PEEK', 'BINARY.PEEK', 'BINARY.SIZE'].includes(name)) return `FETCH item ${name}[…] is not allowed`;
  }
  return undefined;
}

/**
 * Checks one command as imapflow is about to send it. Returns why it is refused, or undefined
 * when it may be sent.
 */
export function checkImapCommand(command: unknown, attributes: unknown, idle = false): string | undefined {
  if (typeof command !== 'string') return 'command without a name';
  const words = command.trim().toUpperCase().split(/\s+/);
  const name = words[0] === 'UID' ? words[1] : words[0];
  if (words.length > (words[0] === 'UID' ? 2 : 1)) return `command ${command} is not allowed`;
  if (words[0] === 'UID' && name !== 'FETCH' && name !== 'SEARCH') return `command UID ${name ?? ''} is not allowed`;
  if (idle && name === 'IDLE' && words.length === 1) return undefined;
  if (!name || !ALLOWED_COMMANDS.has(name)) return `command ${command.toUpperCase()} is not allowed on a read-only connection`;
  if (name === 'FETCH') {
    if (!Array.isArray(attributes) || attributes.length < 2) return 'FETCH without items';
    const attrs = attributes as Attribute[];
    const refused = checkFetchItems(attrs[1]);
    if (refused) return refused;
    for (const modifier of attrs.slice(2)) {
      const list = Array.isArray(modifier) ? modifier : [modifier];
      const first = atomValue(list[0] as Attribute);
      if (!first || !FETCH_MODIFIERS.has(first)) return `FETCH modifier ${first ?? '?'} is not allowed`;
    }
  }
  return undefined;
}

export class ReadOnlyViolation extends Error {
  readonly code = 'READ_ONLY_VIOLATION';
  constructor(
    readonly command: string,
    readonly reason: string,
  ) {
    super(`refused to send ${command}: ${reason}; the connection was closed before anything was sent`);
  }
}

export interface BlockedCommand {
  command: string;
  reason: string;
  at: Date;
}

export type ImapTls = 'tls' | 'starttls' | 'none';

export interface ImapEndpoint {
  /** Where to connect (an address already checked by the caller). */
  address: string;
  port: number;
  tls: ImapTls;
  /** The name the TLS certificate must carry. */
  servername?: string;
}

export interface ImapFolder {
  path: string;
  name: string;
  delimiter: string | null;
  /** \Sent, \Junk, \Trash, \Drafts, \Archive, \All, \Flagged, \Inbox or null. */
  specialUse: string | null;
  /** Listed but cannot be opened (\Noselect, \NonExistent). */
  noSelect: boolean;
}

export interface OpenedFolder {
  path: string;
  uidValidity: string;
  uidNext: number;
  exists: number;
}

export interface HeaderFetch {
  uid: number;
  flags: string[];
  internalDate: Date | null;
  size: number;
  headers: Buffer;
  /** Gmail's labels of the message (X-GM-LABELS, asked only when the server has X-GM-EXT-1). */
  labels?: string[];
}

export const CONNECT_TIMEOUT_MS = 20_000;
export const SOCKET_TIMEOUT_MS = 5 * 60_000;

/**
 * A mailbox opened through the checked client. Every method maps to allowed commands only;
 * `client` is exposed for tests that prove the check (anything sent through it is checked too).
 */
export class ReadOnlyMailbox {
  readonly blocked: BlockedCommand[] = [];
  private violation: ReadOnlyViolation | undefined;
  private current: OpenedFolder | undefined;

  constructor(
    readonly client: ImapFlow,
    private readonly onBlocked?: (blocked: BlockedCommand) => void,
    idle = false,
  ) {
    guard(client, idle, (command, reason) => {
      const blocked = { command, reason, at: new Date() };
      this.blocked.push(blocked);
      this.violation = new ReadOnlyViolation(command, reason);
      this.onBlocked?.(blocked);
      return this.violation;
    });
  }

  /** A command's failure, or the refusal that caused it (imapflow reports a closed connection). */
  private async run<T>(work: () => Promise<T>): Promise<T> {
    try {
      if (this.violation) throw this.violation;
      return await work();
    } catch (error) {
      throw this.violation ?? error;
    }
  }

  get usable(): boolean {
    return !this.violation && this.client.usable;
  }

  /** Plain LIST only: without the XLIST capability imapflow never sends XLIST. */
  private hideXlist(): void {
    this.client.capabilities.delete('XLIST');
  }

  async folders(): Promise<ImapFolder[]> {
    return this.run(async () => {
      this.hideXlist();
      const hasSpecialUse = this.client.capabilities.has('SPECIAL-USE');
      const entries = (await this.client.list({ listOnly: true } as Parameters<ImapFlow['list']>[0])) as ListResponse[];
      return entries.map((e) => {
        const flags = e.flags instanceof Set ? e.flags : new Set<string>();
        const fromServer = [...flags].find((f) => ['\\All', '\\Archive', '\\Drafts', '\\Flagged', '\\Junk', '\\Sent', '\\Trash'].includes(f));
        const guessed = e.path.toUpperCase() === 'INBOX' ? { flag: '\\Inbox' } : specialUse(hasSpecialUse, { name: e.name, flags } as never);
        return {
          path: e.path,
          name: e.name,
          delimiter: e.delimiter ?? null,
          specialUse: fromServer ?? (guessed?.flag || null),
          noSelect: flags.has('\\Noselect') || flags.has('\\NonExistent'),
        };
      });
    });
  }

  async status(path: string): Promise<{ messages: number; uidNext: number; uidValidity: string }> {
    return this.run(async () => {
      const s = await this.client.status(path, { messages: true, uidNext: true, uidValidity: true });
      if (!s) throw new Error(`STATUS of ${path} failed`);
      return { messages: s.messages ?? 0, uidNext: s.uidNext ?? 0, uidValidity: String(s.uidValidity ?? '') };
    });
  }

  /** The folder EXAMINE last opened, while it is still open. */
  get openFolder(): string | undefined {
    const path = this.current?.path;
    return path !== undefined && this.client.mailbox && (this.client.mailbox as { path?: string }).path === path ? path : undefined;
  }

  /** EXAMINE (read-only); reused when the folder is open already. */
  async examine(path: string): Promise<OpenedFolder> {
    if (this.current && this.openFolder === path) return this.current;
    return this.run(async () => {
      this.hideXlist();
      const box = await this.client.mailboxOpen(path, { readOnly: true });
      this.current = { path, uidValidity: String(box.uidValidity), uidNext: Number(box.uidNext ?? 0), exists: Number(box.exists ?? 0) };
      return this.current;
    });
  }

  /** UID SEARCH ALL (or from a UID on) in the open folder, ascending. */
  async uids(fromUid = 1): Promise<number[]> {
    return this.run(async () => {
      const found = await this.client.search(fromUid > 1 ? { uid: `${fromUid}:*` } : { all: true }, { uid: true });
      return (found || []).filter((u) => u >= fromUid).sort((a, b) => a - b);
    });
  }

  /** Headers (selected fields), flags, dates and sizes of messages of the open folder, by UID. */
  async *headers(uids: string, fields: string[]): AsyncGenerator<HeaderFetch> {
    // `labels`: imapflow adds X-GM-LABELS only for servers with X-GM-EXT-1 (Gmail).
    const iterator = this.client.fetch(uids, { uid: true, flags: true, internalDate: true, size: true, headers: fields, labels: true }, { uid: true });
    for await (const m of this.wrapIterator(iterator)) {
      yield {
        uid: m.uid,
        flags: [...(m.flags ?? [])],
        internalDate: m.internalDate ? new Date(m.internalDate) : null,
        size: m.size ?? 0,
        headers: m.headers ?? Buffer.alloc(0),
        ...(m.labels ? { labels: [...m.labels] } : {}),
      };
    }
  }

  /** Whole messages of the open folder (BODY.PEEK[]: nothing is marked read). */
  async *sources(uids: number[]): AsyncGenerator<{ uid: number; source: Buffer }> {
    if (uids.length === 0) return;
    const iterator = this.client.fetch(uids.join(','), { uid: true, source: true }, { uid: true });
    for await (const m of this.wrapIterator(iterator)) {
      if (m.source) yield { uid: m.uid, source: m.source };
    }
  }

  private async *wrapIterator(iterator: AsyncGenerator<FetchMessageObject>): AsyncGenerator<FetchMessageObject> {
    if (this.violation) throw this.violation;
    try {
      for await (const m of iterator) yield m;
    } catch (error) {
      throw this.violation ?? error;
    }
    if (this.violation) throw this.violation;
  }

  async logout(): Promise<void> {
    try {
      if (this.client.usable) await this.client.logout();
    } catch {
      /* closing anyway */
    } finally {
      this.client.close();
    }
  }

  close(): void {
    this.client.close();
  }
}

/**
 * Installs the check on a client: `send` (every command goes through it) refuses anything not
 * allowed and closes the connection first; `write` lets only the continuation data of a command
 * that passed reach the socket (literals, the AUTHENTICATE exchange).
 */
function guard(client: ImapFlow, idle: boolean, refuse: (command: string, reason: string) => ReadOnlyViolation): void {
  const c = client as unknown as {
    commands: Map<string, (connection: unknown, ...args: unknown[]) => Promise<unknown>>;
    capabilities: Map<string, unknown>;
    send(data: { tag: string; command: string; attributes: unknown }): Promise<void>;
    write(chunk: unknown): unknown;
    currentRequest: { tag?: string } | false | null;
    close(): void;
  };
  const commands = new Map(c.commands);
  for (const name of SWITCHED_OFF) if (!(idle && name === 'IDLE')) commands.delete(name);
  const namespace = commands.get('NAMESPACE');
  if (namespace) {
    // imapflow's fallback for servers without NAMESPACE: LIST "" "" gives the prefix and delimiter.
    commands.set('NAMESPACE', async (connection, ...args) => {
      const had = c.capabilities.has('NAMESPACE');
      const value = c.capabilities.get('NAMESPACE');
      c.capabilities.delete('NAMESPACE');
      try {
        return await namespace(connection, ...args);
      } finally {
        if (had) c.capabilities.set('NAMESPACE', value);
      }
    });
  }
  c.commands = commands;
  // Subscription state is never asked for (no LSUB, which imapflow otherwise sends after a LIST).
  (client as unknown as { skipLsub: boolean }).skipLsub = true;

  const send = c.send.bind(client);
  const write = c.write.bind(client);
  let passedTag: string | undefined;
  c.send = async (data) => {
    const refusal = checkImapCommand(data.command, data.attributes, idle);
    if (refusal) {
      passedTag = undefined;
      const violation = refuse(String(data.command).toUpperCase(), refusal);
      c.close();
      throw violation;
    }
    passedTag = data.tag;
    return send(data);
  };
  c.write = (chunk) => {
    const current = c.currentRequest;
    if (!current || !current.tag || current.tag !== passedTag) {
      const violation = refuse('(data outside a checked command)', 'only the continuation of a command that passed the check may be written');
      c.close();
      throw violation;
    }
    return write(chunk);
  };
}

export interface ConnectOptions extends ImapEndpoint {
  user: string;
  /** A password (LOGIN/AUTHENTICATE PLAIN), or an OAuth 2.0 access token (AUTHENTICATE XOAUTH2). */
  password?: string;
  accessToken?: string;
  onBlocked?: (blocked: BlockedCommand) => void;
  connectTimeoutMs?: number;
  /** A live reader (src/mailbox-reader) may also send IDLE (it changes nothing); a migration never does. */
  allowIdle?: boolean;
}

/** Connects and logs in; nothing but the allowed commands can be sent on the result. */
export async function connectReadOnly(opts: ConnectOptions): Promise<ReadOnlyMailbox> {
  // Loaded on first use: the server starts faster and smaller when no migration runs.
  const { ImapFlow } = await import('imapflow');
  const client = new ImapFlow({
    host: opts.address,
    port: opts.port,
    secure: opts.tls === 'tls',
    doSTARTTLS: opts.tls === 'starttls' ? true : opts.tls === 'none' ? false : undefined,
    servername: opts.servername,
    tls: { servername: opts.servername, minVersion: 'TLSv1.2' },
    auth: opts.accessToken !== undefined ? { user: opts.user, accessToken: opts.accessToken } : { user: opts.user, pass: opts.password ?? '' },
    logger: false,
    disableAutoIdle: true,
    disableCompression: true,
    disableAutoEnable: true,
    qresync: false,
    connectionTimeout: opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    greetingTimeout: opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
  } as ConstructorParameters<typeof ImapFlow>[0]);
  const mailbox = new ReadOnlyMailbox(client, opts.onBlocked, opts.allowIdle);
  // An error event without a listener would end the process; failures surface through the calls.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    client.close();
    throw mailbox.blocked.length ? new ReadOnlyViolation(mailbox.blocked[0].command, mailbox.blocked[0].reason) : error;
  }
  return mailbox;
}

export type ImapFailure = 'login' | 'provider_limit' | 'tls' | 'connect' | 'read_only' | 'protocol';

/** A response code in brackets ([AUTHENTICATIONFAILED], [LIMIT], …) of a failed command. */
export function responseCode(error: unknown): string | undefined {
  const e = error as { serverResponseCode?: unknown; response?: { attributes?: { section?: { value?: unknown }[] }[] }; responseText?: unknown } | null;
  if (!e) return undefined;
  if (typeof e.serverResponseCode === 'string') return e.serverResponseCode.toUpperCase();
  const v = e.response?.attributes?.[0]?.section?.[0]?.value;
  if (typeof v === 'string') return v.toUpperCase();
  const m = typeof e.responseText === 'string' ? /^\[([A-Z-]+)/i.exec(e.responseText) : null;
  return m ? m[1].toUpperCase() : undefined;
}

const LIMIT_CODES = new Set(['LIMIT', 'OVERQUOTA', 'UNAVAILABLE', 'INUSE', 'THROTTLED']);
const LIMIT_TEXT = /too many (simultaneous )?connections|bandwidth|exceeded|rate limit|throttl|try again later|temporarily unavailable|limit reached/i;

/** What kind of failure an error from connecting or reading is. */
export function classifyImapError(error: unknown): ImapFailure {
  if (error instanceof ReadOnlyViolation) return 'read_only';
  const e = error as { authenticationFailed?: unknown; code?: unknown; responseText?: unknown; message?: unknown } | null;
  const code = responseCode(error);
  const text = `${typeof e?.responseText === 'string' ? e.responseText : ''} ${typeof e?.message === 'string' ? e.message : ''}`;
  // A refused login may be a limit (too many connections, bandwidth) rather than a wrong password.
  if ((code && LIMIT_CODES.has(code)) || e?.code === 'ETHROTTLE' || LIMIT_TEXT.test(text)) return 'provider_limit';
  if (e?.authenticationFailed) return 'login';
  if (code === 'AUTHENTICATIONFAILED' || code === 'AUTHORIZATIONFAILED' || code === 'EXPIRED') return 'login';
  const errCode = typeof e?.code === 'string' ? e.code : '';
  if (/^ERR_TLS|^ERR_SSL|CERT|^DEPTH_ZERO|^UNABLE_TO|^SELF_SIGNED|HOSTNAME/i.test(errCode) || /certificate|tls|ssl/i.test(text)) return 'tls';
  if (
    /^E(CONNREFUSED|CONNRESET|TIMEDOUT|HOSTUNREACH|NETUNREACH|PIPE|ADDRNOTAVAIL|NOTFOUND|AI_AGAIN)$|^NoConnection$|^EConnectionClosed$|^ETIMEOUT|CONNECT_TIMEOUT|GREETING_TIMEOUT|^ClosedAfterConnect/.test(
      errCode,
    )
  )
    return 'connect';
  if (/timeout|closed|ECONN|socket/i.test(text)) return 'connect';
  return 'protocol';
}

/** A short, secret-free description of an IMAP failure for the migration's error list. */
export function describeImapError(error: unknown): string {
  if (error instanceof ReadOnlyViolation) return error.message;
  const e = error as { responseText?: unknown; message?: unknown; code?: unknown } | null;
  const server = typeof e?.responseText === 'string' && e.responseText ? `the server answered: ${e.responseText}` : '';
  const message = typeof e?.message === 'string' ? e.message : String(error);
  const code = typeof e?.code === 'string' ? ` (${e.code})` : '';
  return (server || message + code).replace(/[\r\n]+/g, ' ').slice(0, 300);
}
