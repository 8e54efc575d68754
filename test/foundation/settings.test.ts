import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { runSvc, spawnServer, type TestEnv, testEnv } from '../helpers/server.js';

const oneLine = (text: string) => text.trim().split('\n').length === 1;

describe('settings', () => {
  test('defaults: embedded SQLite under ./data, ports 8080/9090, broadcasts on', () => {
    const c = loadConfig({});
    assert.equal(c.dataDir, path.resolve('data'));
    assert.deepEqual(c.httpAddr, { host: '0.0.0.0', port: 8080 });
    assert.deepEqual(c.metricsAddr, { host: '127.0.0.1', port: 9090 });
    assert.equal(c.databaseUrl, undefined);
    assert.equal(c.storage.kind, 'local');
    assert.equal(c.broadcasts.mode, 'on');
    assert.equal(c.migration.maxMessageBytes, 50 * 1024 * 1024);
    assert.equal(c.migration.syncMaxDays, 30);
    assert.equal(c.migration.auditDays, 365);
    assert.equal(c.eventsRetentionDays, 7);
  });

  test('SVC_SMTP_FROM takes a display name; unset, the mail comes from svc at the public URL’s host (issue 43 item 13)', () => {
    const smtp = { SVC_SMTP_HOST: 'smtp.relay.example' };
    assert.deepEqual(pick(loadConfig({ ...smtp, SVC_SMTP_FROM: 'Acme Support <help@acme.example>' })), ['help@acme.example', 'Acme Support']);
    assert.deepEqual(pick(loadConfig({ ...smtp, SVC_SMTP_FROM: '"Acme, Support" <help@acme.example>' })), ['help@acme.example', 'Acme, Support']);
    assert.deepEqual(pick(loadConfig({ ...smtp, SVC_SMTP_FROM: 'help@acme.example' })), ['help@acme.example', undefined]);
    assert.deepEqual(pick(loadConfig({ ...smtp, SVC_PUBLIC_URL: 'https://help.acme.example/' })), ['svc@help.acme.example', 'svc']);
    assert.deepEqual(
      pick(loadConfig({ ...smtp, SVC_PUBLIC_URL: 'http://localhost:8080' })),
      ['svc@smtp.relay.example', 'svc'],
      'no usable host: the SMTP host',
    );
    assert.deepEqual(pick(loadConfig(smtp)), ['svc@smtp.relay.example', 'svc']);
    assert.throws(
      () => loadConfig({ ...smtp, SVC_SMTP_FROM: 'Acme <not an address>' }),
      (e: unknown) => e instanceof ConfigError && /SVC_SMTP_FROM/.test(e.message),
    );
  });

  test('SVC_BROADCASTS defaults to approval when sign-up is open', () => {
    assert.equal(loadConfig({ SVC_SIGNUP: 'open' }).broadcasts.mode, 'approval');
    assert.equal(loadConfig({ SVC_SIGNUP: 'open', SVC_BROADCASTS: 'on' }).broadcasts.mode, 'on');
  });

  test('SVC_MAILER_* is all four or none', () => {
    assert.throws(
      () => loadConfig({ SVC_MAILER_REGION: 'eu-west-1' }),
      (e: unknown) => e instanceof ConfigError && /all four or none/.test(e.message),
    );
    const c = loadConfig({
      SVC_MAILER_REGION: 'eu-west-1',
      SVC_MAILER_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      SVC_MAILER_SECRET_ACCESS_KEY: 'secret',
      SVC_MAILER_CONFIGURATION_SET: 'svc',
    });
    assert.equal(c.mailer?.region, 'eu-west-1');
  });

  test('bad values name the setting', () => {
    const bad: Record<string, string>[] = [
      { SVC_HTTP_ADDR: 'nonsense' },
      { SVC_HTTP_ADDR: '127.0.0.1:99999' },
      { SVC_STORAGE: 'ftp' },
      { SVC_MASTER_KEY: 'too-short' },
      { SVC_DATABASE_URL: 'mysql://x' },
      { SVC_WEBHOOK_ALLOW_PRIVATE: 'maybe' },
      { SVC_MIGRATION_SYNC_MAX_DAYS: 'ten' },
      { SVC_OPERATOR_EMAIL: 'not-an-address' },
      { SVC_STORAGE: 's3' },
    ];
    for (const env of bad) {
      const key = Object.keys(env)[0];
      assert.throws(
        () => loadConfig(env),
        (e: unknown) => e instanceof ConfigError && e.message.includes(key),
        key,
      );
    }
  });

  test('every setting is checked for what it means: domains, ARNs, URLs, regions, positive days and sizes', () => {
    const bad: [string, string, RegExp][] = [
      ['SVC_FORWARDING_DOMAIN', 'bad domain', /domain name/],
      ['SVC_FORWARDING_DOMAIN', '-in.example.com', /domain name/],
      ['SVC_MAILER_TOPIC_ARNS', 'garbage', /SNS topic ARN/],
      ['SVC_MAILER_TOPIC_ARNS', 'arn:aws:sns:us-east-1:123456789012:ok, arn:aws:s3:::bucket', /SNS topic ARN/],
      ['SVC_PUBLIC_URL', 'notaurl', /absolute http/],
      ['SVC_PUBLIC_URL', 'ftp://files.example.com', /absolute http/],
      ['SVC_PUBLIC_URL', 'https://support.example.com/?x=1', /without user, query or fragment/],
      ['SVC_MIGRATION_SYNC_MAX_DAYS', '0', /at least 1/],
      ['SVC_EVENTS_RETENTION_DAYS', '0', /at least 1/],
      ['SVC_MIGRATION_AUDIT_DAYS', '0', /at least 1/],
      ['SVC_MIGRATION_QUIET_HOURS', '0', /at least 1/],
      ['SVC_INGRESS_MAX_BYTES', '0', /at least 1/],
      ['SVC_ATTACHMENT_MAX_BYTES', '0', /at least 1/],
      ['SVC_MIGRATION_MAX_MESSAGE_BYTES', '0', /at least 1/],
      ['SVC_SMTP_PORT', '70000', /from 1 to 65535/],
      ['SVC_SMTP_HOST', 'mail server', /host name or IP/],
      ['SVC_S3_ENDPOINT', 'minio:9000', /absolute http/],
      ['SVC_S3_REGION', 'Europe', /AWS region/],
      ['SVC_S3_BUCKET', 'My Bucket', /bucket name/],
      ['SVC_MAILER_REGION', 'eu west 1', /AWS region/],
      ['SVC_MAILER_ENDPOINT', 'localhost:4566', /absolute http/],
      ['SVC_MAILER_CONFIGURATION_SET', 'set with spaces', /configuration set/],
      ['SVC_VAPID_PUBLIC_KEY', 'nonsense', /P-256 public key/],
      ['SVC_MIGRATION_ZENDESK_URL', 'zendesk', /absolute http/],
    ];
    for (const [key, value, why] of bad) {
      assert.throws(
        () => loadConfig({ [key]: value }),
        (e: unknown) => e instanceof ConfigError && e.message.startsWith(`invalid setting ${key}: `) && why.test(e.message) && !e.message.includes('\n'),
        `${key}=${value}`,
      );
    }
    const good = loadConfig({
      SVC_FORWARDING_DOMAIN: 'In.Example.com',
      SVC_MAILER_TOPIC_ARNS: 'arn:aws:sns:us-east-1:123456789012:svc-feedback, arn:aws-us-gov:sns:us-gov-west-1:123456789012:b.fifo',
      SVC_PUBLIC_URL: 'https://support.example.com/',
      SVC_SMTP_HOST: '127.0.0.1',
      SVC_S3_ENDPOINT: 'http://127.0.0.1:9000',
      SVC_BROADCAST_DAILY_RECIPIENTS: '0',
      SVC_SHUTDOWN_TIMEOUT_SECONDS: '0',
    });
    assert.equal(good.forwardingDomain, 'in.example.com');
    assert.equal(good.mailerTopicArns.length, 2);
    assert.equal(good.publicUrl, 'https://support.example.com');
    assert.equal(good.broadcasts.dailyRecipients, 0);
  });

  test('the master key is read as hex or base64', () => {
    const key = randomBytes(32);
    assert.deepEqual(loadConfig({ SVC_MASTER_KEY: key.toString('hex') }).masterKey, key);
    assert.deepEqual(loadConfig({ SVC_MASTER_KEY: key.toString('base64') }).masterKey, key);
  });
});

describe('settings at the command line', () => {
  let te: TestEnv;
  before(async () => {
    te = await testEnv();
  });
  after(() => te.cleanup());

  test('a bad setting stops every command and serve with one line and a non-zero exit', async () => {
    for (const args of [['migrate', 'status'], ['serve'], ['inbox', 'list', '--workspace', 'x'], []]) {
      const r = await runSvc(args, { env: { ...te.env, SVC_STORAGE: 'ftp' } });
      assert.notEqual(r.code, 0, args.join(' '));
      assert.ok(oneLine(r.stderr), r.stderr);
      assert.match(r.stderr, /SVC_STORAGE/);
      assert.equal(r.stdout, '');
    }
    for (const [key, value] of [
      ['SVC_FORWARDING_DOMAIN', 'bad domain'],
      ['SVC_PUBLIC_URL', 'notaurl'],
      ['SVC_EVENTS_RETENTION_DAYS', '0'],
    ]) {
      for (const args of [['serve'], ['migrate', 'status'], ['vapid-keys'], ['inbox', 'list', '--workspace', 'x']]) {
        const bad = await runSvc(args, { env: { ...te.env, [key]: value } });
        assert.notEqual(bad.code, 0, `${key} ${args.join(' ')}`);
        assert.ok(oneLine(bad.stderr), bad.stderr);
        assert.match(bad.stderr, new RegExp(`^error: invalid setting ${key}: `));
        assert.equal(bad.stdout, '');
      }
    }
    const r = await runSvc(['migrate', 'status'], { env: { ...te.env, SVC_MAILER_REGION: 'eu-west-1' } });
    assert.notEqual(r.code, 0);
    assert.ok(oneLine(r.stderr));
    assert.match(r.stderr, /all four or none/);
  });

  test('an unknown option is refused', async () => {
    const r = await runSvc(['inbox', 'list', '--workspace', 'x', '--colour', 'red'], { env: te.env });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown option --colour/);
  });
});

describe('master key', () => {
  test('without SVC_MASTER_KEY serve creates master.key (0600) once, warns, and reuses it', async () => {
    const te = await testEnv();
    const env = { ...te.env };
    delete env.SVC_MASTER_KEY;
    try {
      const first = await spawnServer(env);
      await first.kill();
      const file = path.join(te.dataDir, 'master.key');
      assert.equal(fs.statSync(file).mode & 0o777, 0o600);
      assert.ok(first.stderrLines.some((l) => l.includes('generated a master key file')));
      const key = fs.readFileSync(file, 'utf8');
      const second = await spawnServer(env);
      assert.equal(await second.kill(), 0);
      assert.equal(fs.readFileSync(file, 'utf8'), key);
      assert.ok(!second.stderrLines.some((l) => l.includes('generated a master key file')));
    } finally {
      await te.cleanup();
    }
  });

  test('restored data started without its master key is refused with one line; no new master.key is written', async () => {
    const te = await testEnv();
    try {
      const first = await spawnServer(te.env);
      await first.kill();
      const withoutKey = { ...te.env };
      delete withoutKey.SVC_MASTER_KEY;
      const file = path.join(te.dataDir, 'master.key');
      const where = /SVC_MASTER_KEY.*master\.key/;
      await assert.rejects(spawnServer(withoutKey), (e: Error & { code?: number; stderr?: string }) => {
        assert.notEqual(e.code, 0);
        const lines = e.stderr!.trim().split('\n');
        assert.equal(lines.length, 1, e.stderr);
        assert.match(lines[0], where);
        assert.ok(lines[0].includes(file), lines[0]);
        return true;
      });
      assert.ok(!fs.existsSync(file), 'no key file was written');
      const command = await runSvc(['inbox', 'list', '--workspace', 'Acme'], { env: withoutKey });
      assert.equal(command.code, 1);
      assert.equal(command.stderr.trim().split('\n').length, 1, command.stderr);
      assert.match(command.stderr, where);
      assert.ok(!fs.existsSync(file), 'no key file was written by a command either');
      // With the key in master.key (where the message says it belongs) the data opens again.
      fs.writeFileSync(file, te.env.SVC_MASTER_KEY + '\n', { mode: 0o600 });
      const again = await spawnServer(withoutKey);
      assert.equal(await again.kill(), 0);
    } finally {
      await te.cleanup();
    }
  });

  test('a different master key than the data was written with stops the start with a clear message', async () => {
    const te = await testEnv();
    try {
      const first = await spawnServer(te.env);
      await first.kill();
      const wrong = { ...te.env, SVC_MASTER_KEY: randomBytes(32).toString('hex') };
      await assert.rejects(spawnServer(wrong), (e: Error & { code?: number }) => {
        assert.notEqual(e.code, 0);
        assert.match(e.message, /master key does not match/);
        return true;
      });
    } finally {
      await te.cleanup();
    }
  });
});

function pick(c: ReturnType<typeof loadConfig>) {
  return [c.smtp?.from, c.smtp?.fromName];
}
