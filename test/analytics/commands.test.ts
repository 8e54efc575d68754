import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runSvc, type TestEnv, testEnv } from '../helpers/server.js';

describe('analytics operator commands', () => {
  let te: TestEnv;
  let env: Record<string, string>;
  let workspaceId: string;
  let channelId: string;
  before(async () => {
    te = await testEnv({ SVC_ANALYTICS_MONTHLY_EVENTS: '50000' });
    env = te.env;
    assert.equal((await runSvc(['migrate', 'up'], { env })).code, 0);
    const ws = await runSvc(['bootstrap', '--email', 'owner@example.com', '--workspace', 'Acme'], { env });
    workspaceId = ws.stdout.trim();
    const inbox = (await runSvc(['inbox', 'create', '--workspace', 'Acme', '--name', 'Support'], { env })).stdout.trim();
    const ch = await runSvc(['channel', 'create-chat', '--workspace', 'Acme', '--inbox', inbox, '--name', 'Site chat', '--origin', 'https://example.com'], {
      env,
    });
    assert.equal(ch.code, 0, ch.stderr);
    channelId = ch.stdout.trim().split('\t')[0];
  });
  after(() => te.cleanup());
  const svc = (args: string[]) => runSvc(args, { env });

  test('property create prints the id; list shows domain, id, events this month and the chat channel', async () => {
    const r = await svc(['analytics', 'property', 'create', '--workspace', 'Acme', '--domain', 'WWW.Example.com', '--name', 'Main site', '--subdomains']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^ap_[0-9a-z]{26}\n$/);
    assert.match(r.stderr, /data-domain="example.com"/);
    const id = r.stdout.trim();
    const linked = await svc(['analytics', 'property', 'create', '--workspace', workspaceId, '--domain', 'shop.example.org', '--chat-channel', channelId]);
    assert.equal(linked.code, 0, linked.stderr);
    const list = await svc(['analytics', 'property', 'list', '--workspace', 'Acme']);
    assert.equal(list.code, 0, list.stderr);
    assert.deepEqual(list.stdout.trim().split('\n'), [`example.com\t${id}\t0\t-`, `shop.example.org\t${linked.stdout.trim()}\t0\t${channelId}`]);
    const all = await svc(['analytics', 'property', 'list']);
    assert.ok(all.stdout.includes(`\t${workspaceId}`), all.stdout);
  });

  test('bad domains, a taken domain and a channel of the wrong kind are refused with one stderr line', async () => {
    for (const domain of [
      'https://bad.example.com',
      'example.com/path',
      'localhost',
      '192.168.1.10',
      'example',
      'exa mple.com',
      'example.com:8080',
      '*.example.com',
    ]) {
      const r = await svc(['analytics', 'property', 'create', '--workspace', 'Acme', '--domain', domain]);
      assert.equal(r.code, 1, domain);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, /^error: not a domain/, r.stderr);
    }
    const taken = await svc(['analytics', 'property', 'create', '--workspace', 'Acme', '--domain', 'example.com']);
    assert.equal(taken.code, 1);
    assert.match(taken.stderr, /counted by another property/);
    const noChannel = await svc(['analytics', 'property', 'create', '--workspace', 'Acme', '--domain', 'other.example.net', '--chat-channel', 'ch_nope']);
    assert.equal(noChannel.code, 1);
    assert.equal(noChannel.stderr.trim().split('\n').length, 1);
    const list = await svc(['analytics', 'property', 'list', '--workspace', 'Acme']);
    assert.equal(list.stdout.trim().split('\n').length, 2, 'nothing was added');
  });

  test('workspace analytics-limit sets the monthly limit, 0 falls back to SVC_ANALYTICS_MONTHLY_EVENTS', async () => {
    const set = await svc(['workspace', 'analytics-limit', '--workspace', 'Acme', '--monthly', '1000']);
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stderr, /1000 events a month; 0 events counted/);
    const removed = await svc(['workspace', 'analytics-limit', '--workspace', 'Acme', '--monthly', '0']);
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stderr, /50000 events a month \(the server default\)/);
    const bad = await svc(['workspace', 'analytics-limit', '--workspace', 'Acme', '--monthly', '-5']);
    assert.notEqual(bad.code, 0);
    assert.equal(bad.stderr.trim().split('\n').length, 1);
    const missing = await svc(['workspace', 'analytics-limit', '--workspace', 'Nope', '--monthly', '5']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /not found/);
  });
});
