import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SCOPES } from '../../src/auth/access.js';
import { runSvc, spawnServer, type TestEnv, testEnv } from '../helpers/server.js';

describe('operator commands', () => {
  let te: TestEnv;
  let env: Record<string, string>;
  let workspaceId: string;
  before(async () => {
    te = await testEnv();
    env = te.env;
    assert.equal((await runSvc(['migrate', 'up'], { env })).code, 0);
  });
  after(() => te.cleanup());
  const svc = (args: string[], input?: string) => runSvc(args, { env, input });

  test('bootstrap prints only the workspace id and refuses a second workspace without --allow-existing', async () => {
    const r = await svc(['bootstrap', '--email', 'Owner@Example.com', '--workspace', 'Acme', '--name', 'Olive Owner']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^ws_[0-9a-z]{26}\n$/);
    workspaceId = r.stdout.trim();
    assert.match(r.stderr, /owner@example.com/);
    const again = await svc(['bootstrap', '--email', 'x@example.com', '--workspace', 'Other']);
    assert.equal(again.code, 1);
    assert.equal(again.stderr.trim().split('\n').length, 1);
    assert.match(again.stderr, /--allow-existing/);
    assert.equal(again.stdout, '');
    const bad = await svc(['bootstrap', '--email', 'x@example.com', '--workspace', 'Other', '--locale', 'fr', '--allow-existing']);
    assert.notEqual(bad.code, 0);
    const missing = await svc(['bootstrap', '--workspace', 'Other']);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /email/);
  });

  test('--workspace takes an id or the exact name; a shared name is refused with the ids', async () => {
    const byName = await svc(['inbox', 'list', '--workspace', 'Acme']);
    assert.equal(byName.code, 0, byName.stderr);
    const byId = await svc(['inbox', 'list', '--workspace', workspaceId]);
    assert.equal(byId.stdout, byName.stdout);
    const unknown = await svc(['inbox', 'list', '--workspace', 'acme']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /not found/);
    const twin1 = (await svc(['bootstrap', '--email', 'a@example.com', '--workspace', 'Twin', '--allow-existing'])).stdout.trim();
    const twin2 = (await svc(['bootstrap', '--email', 'b@example.com', '--workspace', 'Twin', '--allow-existing'])).stdout.trim();
    const amb = await svc(['inbox', 'create', '--workspace', 'Twin', '--name', 'X']);
    assert.equal(amb.code, 1);
    assert.ok(amb.stderr.includes(twin1) && amb.stderr.includes(twin2), amb.stderr);
    assert.equal(amb.stderr.trim().split('\n').length, 1);
  });

  test('inbox create uses the spec defaults and prints only the id; bad values change nothing', async () => {
    const r = await svc(['inbox', 'create', '--workspace', 'Acme', '--name', 'Customer Support']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^inb_[0-9a-z]{26}\n$/);
    const second = await svc([
      'inbox',
      'create',
      '--workspace',
      'Acme',
      '--name',
      'Customer Support',
      '--locale',
      'tr',
      '--timezone',
      'Europe/Istanbul',
      '--mode',
      'live',
      '--expected-reply-minutes',
      '30',
    ]);
    assert.equal(second.code, 0, second.stderr);
    const list = await svc(['inbox', 'list', '--workspace', 'Acme']);
    const rows = list.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t'));
    assert.deepEqual(rows[0], ['id', 'slug', 'name', 'locale', 'timezone', 'mode', 'expected_reply_minutes']);
    assert.deepEqual(rows[1].slice(1), ['customer-support', 'Customer Support', 'en', 'UTC', 'async', '-']);
    assert.deepEqual(rows[2].slice(1), ['customer-support-2', 'Customer Support', 'tr', 'Europe/Istanbul', 'live', '30']);
    for (const args of [
      ['--timezone', 'Mars/Olympus'],
      ['--mode', 'sometimes'],
      ['--expected-reply-minutes', 'soon'],
      ['--slug', 'customer-support'],
      ['--locale', '!!'],
    ]) {
      const bad = await svc(['inbox', 'create', '--workspace', 'Acme', '--name', 'Bad', ...args]);
      assert.notEqual(bad.code, 0, args.join(' '));
      assert.equal(bad.stdout, '');
      assert.equal(bad.stderr.trim().split('\n').length, 1, bad.stderr);
    }
    assert.equal((await svc(['inbox', 'list', '--workspace', 'Acme'])).stdout.trim().split('\n').length, 3);
  });

  test('channel create-email reads the password from a file or stdin, never the command line; list shows only whether one is set', async () => {
    const pwFile = path.join(te.dataDir, 'pw.txt');
    fs.writeFileSync(pwFile, 'file-secret-pw\n');
    const a = await svc([
      'channel',
      'create-email',
      '--workspace',
      'Acme',
      '--inbox',
      'customer-support',
      '--name',
      'Support',
      '--address',
      'support@acme.test',
      '--smtp-host',
      'smtp.acme.test',
      '--smtp-port',
      '2525',
      '--tls',
      'none',
      '--smtp-username',
      'support',
      '--smtp-password-file',
      pwFile,
    ]);
    assert.equal(a.code, 0, a.stderr);
    assert.match(a.stdout, /^ch_[0-9a-z]{26}\n$/);
    const b = await svc(
      [
        'channel',
        'create-email',
        '--workspace',
        'Acme',
        '--inbox',
        'customer-support',
        '--name',
        'Sales',
        '--address',
        'sales@acme.test',
        '--smtp-host',
        'smtp.acme.test',
        '--smtp-password-file',
        '-',
      ],
      'stdin-secret-pw\n',
    );
    assert.equal(b.code, 0, b.stderr);
    const c = await svc(['channel', 'create-email', '--workspace', 'Acme', '--inbox', 'customer-support', '--name', 'Plain', '--address', 'plain@acme.test']);
    assert.equal(c.code, 0, c.stderr);
    const refused = await svc([
      'channel',
      'create-email',
      '--workspace',
      'Acme',
      '--inbox',
      'customer-support',
      '--name',
      'X',
      '--address',
      'x@acme.test',
      '--smtp-host',
      'h',
      '--smtp-password',
      'oops',
    ]);
    assert.notEqual(refused.code, 0);
    assert.ok(!refused.stderr.includes('oops'));
    const dup = await svc([
      'channel',
      'create-email',
      '--workspace',
      'Acme',
      '--inbox',
      'customer-support',
      '--name',
      'Again',
      '--address',
      'SUPPORT@acme.test',
    ]);
    assert.equal(dup.code, 1);
    const list = await svc(['channel', 'list', '--workspace', 'Acme', '--inbox', 'customer-support']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /support@acme\.test\tsmtp=smtp\.acme\.test:2525 tls=none user=support password=set/);
    assert.match(list.stdout, /sales@acme\.test\tsmtp=smtp\.acme\.test:587 tls=starttls user=- password=set/);
    assert.match(list.stdout, /plain@acme\.test\tsmtp=none/);
    assert.ok(!list.stdout.includes('file-secret-pw') && !list.stdout.includes('stdin-secret-pw'));
    if (!env.SVC_DATABASE_URL) {
      const db = fs.readFileSync(path.join(te.dataDir, 'svc.db')).toString('latin1');
      assert.ok(!db.includes('file-secret-pw') && !db.includes('stdin-secret-pw'), 'passwords are sealed at rest');
    }
  });

  test('channel create-chat prints the id and public key separated by a tab; --origin repeats', async () => {
    const r = await svc([
      'channel',
      'create-chat',
      '--workspace',
      'Acme',
      '--inbox',
      'customer-support',
      '--name',
      'Widget',
      '--origin',
      'https://acme.test',
      '--origin',
      'https://www.acme.test',
      '--ask-email-offline=false',
      '--greeting',
      'Hi!',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^ch_[0-9a-z]{26}\tsvc_pk_[0-9a-z]{24}\n$/);
    const list = await svc(['channel', 'list', '--workspace', 'Acme', '--inbox', 'customer-support']);
    assert.match(list.stdout, /origins=https:\/\/acme\.test,https:\/\/www\.acme\.test allow_anonymous=false ask_email_offline=false/);
    const bad = await svc(['channel', 'create-chat', '--workspace', 'Acme', '--inbox', 'customer-support', '--name', 'W', '--origin', 'acme.test']);
    assert.equal(bad.code, 1);
    const none = await svc(['channel', 'create-chat', '--workspace', 'Acme', '--inbox', 'customer-support', '--name', 'W']);
    assert.notEqual(none.code, 0);
  });

  test('a newcomer in a checkout: the README says npx svc, and npx svc --help works there', async () => {
    const readme = fs.readFileSync('README.md', 'utf8');
    const quickStart = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('## Install on a server'));
    assert.match(quickStart, /npm ci && npm start/);
    assert.match(quickStart, /^npx svc bootstrap /m);
    const help = await new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
      // --no-install: the checkout's own bin, never a package from the registry.
      const child = spawn('npx', ['--no-install', 'svc', '--help'], {
        cwd: path.resolve('.'),
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout }));
    });
    assert.equal(help.code, 0);
    assert.match(help.stdout, /ingest-email/);
    assert.match(help.stdout, /bootstrap/);
  });

  test('api-key create --help lists the valid scopes', async () => {
    const help = await svc(['api-key', 'create', '--help']);
    assert.equal(help.code, 0, help.stderr);
    const text = help.stdout + help.stderr;
    for (const scope of SCOPES) assert.ok(text.includes(scope), `${scope} in:\n${text}`);
  });

  test('api-key create prints only the secret; list never shows it; revoke stops it on a running server', async () => {
    const r = await svc([
      'api-key',
      'create',
      '--workspace',
      'Acme',
      '--name',
      'backend',
      '--scope',
      'contacts:read',
      '--scope',
      'contacts:write',
      '--inbox',
      'customer-support',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^svc_sk_[0-9a-z]{32}\n$/);
    const secret = r.stdout.trim();
    const full = (await svc(['api-key', 'create', '--workspace', 'Acme', '--name', 'all'])).stdout.trim();
    const list = await svc(['api-key', 'list', '--workspace', 'Acme']);
    assert.ok(!list.stdout.includes(secret) && !list.stdout.includes(full));
    const rows = list.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t'));
    assert.deepEqual(rows[0], ['id', 'prefix', 'name', 'created', 'last_used', 'revoked', 'expires', 'inboxes', 'scopes']);
    const backend = rows.find((row) => row[2] === 'backend')!;
    assert.ok(secret.startsWith(backend[1]));
    assert.equal(backend[8], 'contacts:read,contacts:write');
    assert.match(backend[7], /^inb_/);
    assert.equal(rows.find((row) => row[2] === 'all')![7], 'all');
    const badScope = await svc(['api-key', 'create', '--workspace', 'Acme', '--name', 'x', '--scope', 'root']);
    assert.equal(badScope.code, 1);
    assert.match(badScope.stderr, /unknown scope root/);

    const server = await spawnServer(env);
    try {
      assert.equal((await fetch(`${server.url}/v1/workspace`, { headers: { authorization: `Bearer ${full}` } })).status, 200);
      const id = rows.find((row) => row[2] === 'all')![0];
      const rv = await svc(['api-key', 'revoke', id]);
      assert.equal(rv.code, 0, rv.stderr);
      assert.equal((await fetch(`${server.url}/v1/workspace`, { headers: { authorization: `Bearer ${full}` } })).status, 401);
      const listed = await svc(['api-key', 'list', '--workspace', 'Acme']);
      assert.notEqual(
        listed.stdout
          .split('\n')
          .find((l) => l.startsWith(id))!
          .split('\t')[5],
        '-',
      );
      assert.equal((await svc(['api-key', 'revoke', 'key_nope'])).code, 1);
    } finally {
      await server.kill();
    }
  });

  test('vapid-keys needs no database', async () => {
    const r = await runSvc(['vapid-keys'], {
      env: { SVC_DATA_DIR: path.join(te.dataDir, 'does-not-exist'), SVC_DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' },
    });
    assert.equal(r.code, 0, r.stderr);
    const pub = /SVC_VAPID_PUBLIC_KEY=([A-Za-z0-9_-]+)/.exec(r.stdout)![1];
    const priv = /SVC_VAPID_PRIVATE_KEY=([A-Za-z0-9_-]+)/.exec(r.stdout)![1];
    assert.equal(Buffer.from(pub, 'base64url').length, 65);
    assert.equal(Buffer.from(priv, 'base64url').length, 32);
    assert.ok(!fs.existsSync(path.join(te.dataDir, 'does-not-exist')));
  });
});
