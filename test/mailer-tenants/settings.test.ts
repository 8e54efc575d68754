// Turning per-inbox Amazon SES tenants on and off: the SVC_MAILER_* settings, and a server started
// with them writes nothing to the provider for what was saved while they were unset.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { ManualClock, MINUTE } from '../../src/platform/clock.js';
import { startAwsFake } from '../helpers/aws.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { ACCOUNT, MANAGED_KEY, SERVER_KEY, SES_HOST, SMTP_PASSWORD, savedSignalJob } from '../helpers/mailer-tenants.js';
import { runSvc, startTestServer, testEnv } from '../helpers/server.js';
import { installSesFake } from '../helpers/ses-fake.js';

describe('tenant settings', () => {
  test('SVC_MAILER_* are all four or none; the tenant prefix makes valid tenant names', () => {
    const four = {
      SVC_MAILER_REGION: 'us-east-1',
      SVC_MAILER_ACCESS_KEY_ID: SERVER_KEY,
      SVC_MAILER_SECRET_ACCESS_KEY: 'x',
      SVC_MAILER_CONFIGURATION_SET: 'set',
    };
    assert.equal(loadConfig({}).mailer, undefined);
    assert.equal(loadConfig(four).mailer?.tenantPrefix, 'svc-');
    for (const missing of Object.keys(four)) {
      const env: Record<string, string> = { ...four };
      delete env[missing];
      assert.throws(
        () => loadConfig(env),
        (e: Error) => e instanceof ConfigError && /all four or none/.test(e.message),
      );
    }
    assert.throws(() => loadConfig({ ...four, SVC_MAILER_TENANT_PREFIX: 'bad prefix!' }), /SVC_MAILER_TENANT_PREFIX/);
    assert.equal(loadConfig({ ...four, SVC_MAILER_TENANT_PREFIX: 'acme_' }).mailer?.tenantPrefix, 'acme_');
  });
});

describe('turning SES tenants on writes nothing at startup', () => {
  test('a channel saved while SVC_MAILER_* was unset, its reaction still queued at the stop, is not acted on when the feature is turned on; a later save is', async () => {
    const aws = await startAwsFake();
    const ses = installSesFake(aws, {
      account: ACCOUNT,
      serverKey: SERVER_KEY,
      keyAccounts: { [MANAGED_KEY]: ACCOUNT },
      identities: [{ IdentityName: 'shop.example', IdentityType: 'DOMAIN' }],
    });
    const te = await testEnv();
    const mailerOn = {
      SVC_MAILER_REGION: 'us-east-1',
      SVC_MAILER_ACCESS_KEY_ID: SERVER_KEY,
      SVC_MAILER_SECRET_ACCESS_KEY: 'server-secret-key',
      SVC_MAILER_CONFIGURATION_SET: 'svc-feedback-set',
      SVC_MAILER_ENDPOINT: aws.url,
    };
    try {
      // Feature off: the save stores its reaction; the server stops before running it (the race).
      const off = await startTestServer({ testEnv: te, clock: new ManualClock('2026-03-01T10:00:00Z') });
      await off.app.jobs.stop();
      const seed = await seedWorkspace(off.app);
      const saved = await off.request('POST', '/v1/channels', {
        token: seed.apiKey,
        body: {
          kind: 'email',
          inbox_id: seed.inboxId,
          name: 'News',
          address: 'news@shop.example',
          smtp_host: SES_HOST,
          smtp_port: 2587,
          tls: 'none',
          smtp_username: MANAGED_KEY,
          smtp_password: SMTP_PASSWORD,
        },
      });
      assert.equal(saved.status, 201, JSON.stringify(saved.body));
      assert.ok(await savedSignalJob(off.app.db, saved.body.id), 'the reaction is queued');
      await off.stop();

      // Feature on: every job due runs, and still nothing is written to the provider.
      const on = await startTestServer({ testEnv: te, env: mailerOn, clock: new ManualClock('2026-03-01T11:00:00Z') });
      try {
        await on.app.jobs.drain();
        assert.equal(await savedSignalJob(on.app.db, saved.body.id), undefined, 'the queued reaction is done');
        assert.deepEqual(ses.writes(), [], 'no provider write at startup');
        assert.equal(ses.tenants.size, 0);
        // The operator's back-fill still sees the channel.
        const dry = await runSvc(['inbox', 'mailer-tenant', 'sync', '--workspace', seed.workspaceId, '--dry-run'], { env: { ...on.env, ...mailerOn } });
        assert.equal(dry.code, 0, dry.stderr);
        assert.match(dry.stdout, new RegExp(`^${seed.inboxId}\\t\\S+\\twould create tenant svc-${seed.inboxId}`, 'm'));
        // A save now (the feature on) acts.
        (on.clock as ManualClock).advance(MINUTE);
        const changed = await on.request('PATCH', `/v1/channels/${saved.body.id}`, { token: seed.apiKey, body: { name: 'Newsletter' } });
        assert.equal(changed.status, 200, JSON.stringify(changed.body));
        await on.app.jobs.drain();
        assert.ok(ses.tenants.get(`svc-${seed.inboxId}`), 'the save created the tenant');
      } finally {
        await on.stop();
      }
    } finally {
      await te.cleanup();
      await aws.close();
    }
  });
});
