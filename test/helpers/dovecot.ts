// A real Dovecot IMAP server for tests and benches: started on a free 127.0.0.1 port with a
// throwaway configuration, Maildir and rawlog (every command a client sends after logging in is
// written there by Dovecot itself), and stopped afterwards. Mail is put in place by writing Maildir
// files directly, so that large mailboxes are cheap to make and the files can be checked on disk.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const DOVECOT = ['/usr/sbin/dovecot', '/usr/local/sbin/dovecot'].find((p) => fs.existsSync(p));

/** Why Dovecot tests cannot run here (CI installs dovecot-imapd, so there nothing is skipped). */
export const dovecotMissing: string | false = DOVECOT ? false : 'Dovecot is not installed (apt-get install dovecot-imapd)';

export interface MaildirMessage {
  raw: Buffer | string;
  /** Maildir flags of the file name suffix (S seen, R replied, F flagged, T trashed, D draft). */
  flags?: string;
  /** Put in new/ (unseen, never looked at by a mail client) instead of cur/. */
  isNew?: boolean;
  /** File time: Dovecot takes the INTERNALDATE from it. */
  receivedAt?: Date;
}

export interface Dovecot {
  host: string;
  port: number;
  dir: string;
  /** Creates a user (Maildir with INBOX, Sent, Archive, Junk, Trash, Drafts). */
  addUser(user: string, password: string): void;
  /** Changes a password; resolves once Dovecot uses the new one (it re-reads the file when it changes). */
  setPassword(user: string, password: string): Promise<void>;
  /** Ends the user's open sessions (as a provider does when a password is revoked). */
  kick(user: string): void;
  /** The Maildir folder on disk ('INBOX', 'Sent', 'Archive/2020', …). */
  folderDir(user: string, folder: string): string;
  /** Writes messages as Maildir files; returns their file paths. */
  deliver(user: string, folder: string, messages: MaildirMessage[]): string[];
  /** Every Maildir file name of a user under cur/ and new/, with a hash of its content: what must never change. */
  snapshot(user: string): Map<string, string>;
  /** All client lines Dovecot recorded after login for the user (rawlog *.in files). */
  rawlogCommands(user: string): string[];
  /** doveadm with this configuration. */
  doveadm(args: string[]): string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, child: ChildProcess, log: () => string, timeoutMs = 15_000): Promise<void> {
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`dovecot exited with ${child.exitCode}:\n${log()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('data', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() - started > timeoutMs) throw new Error(`dovecot did not listen on ${port}:\n${log()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

let uniqueCounter = 0;

/**
 * Starts Dovecot. As root the mail processes run as `nobody` (Dovecot refuses uid 0 for mail), as
 * any other user everything runs as that user.
 */
export async function startDovecot(
  opts: {
    maxUserIpConnections?: number;
    oauth2IntrospectionUrl?: string /** Capabilities after login instead of Dovecot's (e.g. without IDLE). */;
    capabilities?: string;
  } = {},
): Promise<Dovecot> {
  if (!DOVECOT) throw new Error(dovecotMissing as string);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-dovecot-'));
  fs.chmodSync(dir, 0o755);
  const root = process.getuid?.() === 0;
  const me = os.userInfo();
  const mailUser = root ? 'nobody' : me.username;
  const mailUid = root ? Number(execFileSync('id', ['-u', 'nobody']).toString().trim()) : me.uid;
  const mailGid = root ? Number(execFileSync('id', ['-g', 'nobody']).toString().trim()) : me.gid;
  const mailRoot = path.join(dir, 'mail');
  const rawlog = path.join(dir, 'rawlog');
  const usersFile = path.join(dir, 'users');
  for (const d of [mailRoot, rawlog, path.join(dir, 'base'), path.join(dir, 'state')]) fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(usersFile, '');
  // XOAUTH2/OAUTHBEARER logins: Dovecot asks the (fake) provider's introspection endpoint whether
  // the access token is live and whose it is; the user name logged in with must be that account.
  const oauth2File = path.join(dir, 'oauth2.conf.ext');
  if (opts.oauth2IntrospectionUrl)
    fs.writeFileSync(
      oauth2File,
      `introspection_mode = post\nintrospection_url = ${opts.oauth2IntrospectionUrl}\nusername_attribute = username\nactive_attribute = active\nactive_value = true\nforce_introspection = yes\n`,
    );
  if (root) {
    fs.chownSync(mailRoot, mailUid, mailGid);
    fs.chownSync(rawlog, mailUid, mailGid);
  }
  const configFor = (port: number) => `
protocols = imap
listen = 127.0.0.1
base_dir = ${dir}/base
state_dir = ${dir}/state
instance_name = svc-test-${path.basename(dir)}
log_path = ${dir}/dovecot.log
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login${opts.oauth2IntrospectionUrl ? ' xoauth2 oauthbearer' : ''}
auth_failure_delay = 0
default_internal_user = ${root ? 'dovecot' : me.username}
default_login_user = ${root ? 'dovenull' : me.username}
mail_location = maildir:${mailRoot}/%u
mail_uid = ${mailUid}
mail_gid = ${mailGid}
first_valid_uid = 1
first_valid_gid = 0
mail_max_userip_connections = ${opts.maxUserIpConnections ?? 100}
login_trusted_networks = 127.0.0.1/8
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${usersFile}${opts.oauth2IntrospectionUrl ? '\n  mechanisms = plain login' : ''}
}
${opts.oauth2IntrospectionUrl ? `passdb {\n  driver = oauth2\n  mechanisms = xoauth2 oauthbearer\n  args = ${oauth2File}\n}\n` : ''}userdb {
  driver = static
  args = uid=${mailUid} gid=${mailGid} home=${mailRoot}/%u
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
  chroot =
}
service anvil {
  chroot =
}
protocol imap {
  rawlog_dir = ${rawlog}${opts.capabilities ? `\n  imap_capability = ${opts.capabilities}` : ''}
}
namespace inbox {
  inbox = yes
  separator = /
  mailbox Sent {
    special_use = \\Sent
  }
  mailbox Archive {
    special_use = \\Archive
  }
  mailbox Junk {
    special_use = \\Junk
  }
  mailbox Trash {
    special_use = \\Trash
  }
  mailbox Drafts {
    special_use = \\Drafts
  }
}
`;
  const configFile = path.join(dir, 'dovecot.conf');
  const logFile = path.join(dir, 'dovecot.log');
  let output = '';
  const readLog = () => output + (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '');
  let port: number;
  let child: ChildProcess;
  let exited: Promise<void>;
  // The free port is found before Dovecot binds it: on a busy machine (test files run in parallel)
  // another process may take it in between, and Dovecot then exits; a few tries with fresh ports.
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    fs.writeFileSync(configFile, configFor(port));
    fs.rmSync(logFile, { force: true });
    output = '';
    const started = spawn(DOVECOT, ['-F', '-c', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
    started.stdout!.on('data', (d) => (output += d));
    started.stderr!.on('data', (d) => (output += d));
    child = started;
    exited = new Promise<void>((resolve) => started.once('exit', () => resolve()));
    try {
      await waitForPort(port, child, readLog);
      break;
    } catch (error) {
      child.kill('SIGKILL');
      await exited;
      if (attempt < 3 && /Address already in use/i.test(readLog())) continue;
      fs.rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  }

  const own = (p: string) => {
    if (root) fs.chownSync(p, mailUid, mailGid);
  };
  const mkdirOwned = (p: string) => {
    const parts: string[] = [];
    for (let d = p; !fs.existsSync(d); d = path.dirname(d)) parts.unshift(d);
    for (const d of parts) {
      fs.mkdirSync(d);
      own(d);
    }
  };
  const userDir = (user: string) => path.join(mailRoot, user);
  const folderDir = (user: string, folder: string) =>
    folder.toUpperCase() === 'INBOX' ? userDir(user) : path.join(userDir(user), '.' + folder.split('/').join('.'));
  const ensureFolder = (user: string, folder: string) => {
    const d = folderDir(user, folder);
    for (const sub of ['cur', 'new', 'tmp']) mkdirOwned(path.join(d, sub));
    if (d !== userDir(user) && !fs.existsSync(path.join(d, 'maildirfolder'))) {
      fs.writeFileSync(path.join(d, 'maildirfolder'), '');
      own(path.join(d, 'maildirfolder'));
    }
    return d;
  };
  const passwords = new Map<string, string>();
  // Dovecot re-reads the file when its modification time changes: every version gets a later one.
  let usersVersion = Math.floor(Date.now() / 1000);
  const writeUsers = () => {
    const tmp = usersFile + '.tmp';
    fs.writeFileSync(tmp, [...passwords].map(([u, p]) => `${u}:{PLAIN}${p}::::::nodelay=yes\n`).join(''));
    usersVersion += 2;
    fs.utimesSync(tmp, usersVersion, usersVersion);
    fs.renameSync(tmp, usersFile);
  };
  const hostname = 'svc-test';

  return {
    host: '127.0.0.1',
    port,
    dir,
    addUser(user, password) {
      passwords.set(user, password);
      writeUsers();
      for (const f of ['INBOX', 'Sent', 'Archive', 'Junk', 'Trash', 'Drafts']) ensureFolder(user, f);
    },
    async setPassword(user, password) {
      passwords.set(user, password);
      writeUsers();
      // Dovecot looks at the file's time at most once a second.
      await new Promise((r) => setTimeout(r, 1200));
    },
    kick(user) {
      try {
        execFileSync('doveadm', ['-c', configFile, 'kick', user], { stdio: 'ignore' });
      } catch {
        /* no session to end */
      }
    },
    folderDir,
    deliver(user, folder, messages) {
      const d = ensureFolder(user, folder);
      const out: string[] = [];
      for (const m of messages) {
        const raw = typeof m.raw === 'string' ? Buffer.from(m.raw) : m.raw;
        const at = m.receivedAt ?? new Date();
        const base = `${Math.floor(at.getTime() / 1000)}.M${++uniqueCounter}P${process.pid}R${randomBytes(4).toString('hex')}.${hostname},S=${raw.length}`;
        const file = m.isNew ? path.join(d, 'new', base) : path.join(d, 'cur', `${base}:2,${m.flags ?? ''}`);
        fs.writeFileSync(file, raw);
        fs.utimesSync(file, at, at);
        own(file);
        out.push(file);
      }
      return out;
    },
    snapshot(user) {
      const out = new Map<string, string>();
      const walk = (d: string) => {
        for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
          const full = path.join(d, entry.name);
          if (entry.isDirectory()) {
            if (entry.name === 'tmp') continue;
            walk(full);
          } else if (path.basename(d) === 'cur' || path.basename(d) === 'new') {
            out.set(path.relative(userDir(user), full), fs.readFileSync(full).toString('base64').slice(0, 64) + ':' + fs.statSync(full).size);
          }
        }
      };
      walk(userDir(user));
      return out;
    },
    rawlogCommands(user) {
      void user; // Dovecot names rawlog files by time and process; this server holds test users only
      const lines: string[] = [];
      for (const name of fs.readdirSync(rawlog).sort()) {
        if (!name.endsWith('.in')) continue;
        for (const line of fs.readFileSync(path.join(rawlog, name), 'utf8').split(/\r?\n/)) if (line.trim()) lines.push(line);
      }
      return lines;
    },
    doveadm(args) {
      return execFileSync('doveadm', ['-c', configFile, ...args], { encoding: 'utf8' });
    },
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
