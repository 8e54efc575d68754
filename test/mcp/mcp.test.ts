// The MCP endpoint with the SDK's own client over Streamable HTTP against a real server: who may
// connect (a workspace API key; no key, a session or GET are refused), the tool list and schemas
// (no tool takes a password), the move_to_service prompt, scopes and inbox limits (a refusal is a
// tool error with the API's code), and the conversation tools doing what the API does.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/api-keys/service.js';
import { createInbox } from '../../src/inboxes/service.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';
import { connectMcp, type McpSession } from './helpers.js';

const MIGRATION_TOOLS = [
  'migration_presets',
  'migration_detect',
  'migration_list',
  'migration_create',
  'migration_update',
  'migration_status',
  'migration_credentials_link',
  'migration_test',
  'migration_folders',
  'migration_scan',
  'migration_preview',
  'migration_start',
  'migration_pause',
  'migration_resume',
  'migration_cancel',
  'migration_retry',
  'migration_errors',
  'migration_probe',
  'migration_finish',
];
const CONVERSATION_TOOLS = [
  'search_conversations',
  'list_conversations',
  'read_conversation',
  'reply',
  'add_note',
  'assign_conversation',
  'set_conversation_status',
  'set_conversation_labels',
  'forward_message',
  'start_conversation',
  'snooze_conversation',
  'merge_conversations',
  'unmerge_conversation',
  'split_conversation',
  'list_teams',
  'assign_conversation_team',
  'list_macros',
  'run_macro',
  'conversation_sla',
  'list_sla_due',
];

describe('MCP server at /v1/mcp', () => {
  let s: TestServer;
  let seed: Seed;
  let sink: SmtpSink;
  let full: McpSession;
  let supportAddress: string;
  let otherInboxId: string;
  let conversationId: string;
  let otherConversationId: string;
  const keyWith = async (scopes: string[], inboxIds?: string[]) =>
    (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: `k ${scopes.join(' ')}`, scopes, inboxIds })).secret;

  before(async () => {
    sink = await startSmtpSink(SINK_LOGIN);
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    seed = await seedWorkspace(s.app);
    const channel = await seedEmailChannel(s.app, seed, { smtpPort: sink.port });
    supportAddress = channel.address!;
    const other = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Billing' });
    otherInboxId = other.id;
    const billing = await seedEmailChannel(s.app, { workspaceId: seed.workspaceId, inboxId: other.id });
    conversationId = (await deliverMail(s, supportAddress, { From: 'Ada <ada@customer.test>', Subject: 'Printer on fire' }, 'The printer is on fire.'))
      .conversation_id;
    otherConversationId = (await deliverMail(s, billing.address!, { From: 'Bob <bob@customer.test>', Subject: 'Invoice' })).conversation_id;
    full = await connectMcp(s, seed.apiKey);
  });
  after(async () => {
    await full?.close();
    await s?.stop();
    await sink?.close();
  });

  test('only a workspace API key opens it: no key 401, a session token 403, GET 405, all with the API’s error shape', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    const headers = { accept: 'application/json, text/event-stream' };
    const none = await s.request('POST', '/v1/mcp', { body: init, headers });
    assert.equal(none.status, 401);
    assert.equal(none.body.error.code, 'unauthorized');
    const session = await s.request('POST', '/v1/mcp', { body: init, headers, token: seed.ownerToken });
    assert.equal(session.status, 403);
    assert.equal(session.body.error.code, 'forbidden');
    const cookie = await s.request('POST', '/v1/mcp', { body: init, headers: { ...headers, cookie: `svc_session=${seed.ownerToken}` } });
    assert.equal(cookie.status, 401, 'the session cookie is not looked at');
    const revoked = await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'gone' });
    await s.app.db.updateTable('api_keys').set({ revoked_at: new Date().toISOString() }).where('id', '=', revoked.key.id).execute();
    assert.equal((await s.request('POST', '/v1/mcp', { body: init, headers, token: revoked.secret })).status, 401);
    const get = await s.request('GET', '/v1/mcp', { token: seed.apiKey });
    assert.equal(get.status, 405);
    assert.equal(get.body.error.code, 'method_not_allowed');
    const bad = await s.request('POST', '/v1/mcp', {
      raw: '{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"\\u0000"}}',
      headers: { ...headers, 'content-type': 'application/json' },
      token: seed.apiKey,
    });
    assert.equal(bad.status, 400, 'U+0000 is refused before any tool sees it');
    assert.equal(bad.body.error.code, 'invalid_request');
  });

  test('the tool list: every step with a description and an object schema; no tool takes a password', async () => {
    const { tools } = await full.client.listTools();
    const names = tools.map((t) => t.name);
    assert.deepEqual(
      [...names].sort(),
      [
        ...['list_inboxes', 'list_channels', 'list_members'],
        ...MIGRATION_TOOLS,
        ...CONVERSATION_TOOLS,
        'list_analytics_properties',
        'analytics_stats',
        'analytics_realtime',
      ].sort(),
    );
    for (const tool of tools) {
      assert.ok(tool.description && tool.description.length > 30, `${tool.name} is described`);
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      const schema = JSON.stringify(tool.inputSchema);
      assert.doesNotMatch(schema, /password"/i, `${tool.name} takes no password`);
    }
    const create = tools.find((t) => t.name === 'migration_create')!;
    const props = create.inputSchema.properties as Record<string, { type?: unknown }>;
    for (const field of ['source_address', 'inbox_id', 'channel_id', 'folders', 'date_from', 'close_after_days', 'skip_automatic', 'keep_originals'])
      assert.ok(props[field], `migration_create has ${field}`);
    const finish = tools.find((t) => t.name === 'migration_finish')!;
    assert.deepEqual(finish.inputSchema.required, ['migration_id']);
    assert.equal((finish.inputSchema.properties as Record<string, { type: string }>).force.type, 'boolean');
    const reply = tools.find((t) => t.name === 'reply')!;
    assert.deepEqual([...(reply.inputSchema.required as string[])].sort(), ['body', 'conversation_id']);
    assert.equal(tools.find((t) => t.name === 'migration_status')!.annotations?.readOnlyHint, true);
    assert.equal(tools.find((t) => t.name === 'migration_cancel')!.annotations?.destructiveHint, true);
  });

  test('the move_to_service prompt walks the steps in order with the rules', async () => {
    const { prompts } = await full.client.listPrompts();
    const prompt = prompts.find((p) => p.name === 'move_to_service');
    assert.ok(prompt);
    assert.deepEqual(prompt.arguments?.map((a) => a.name).sort(), ['address', 'inbox']);
    const got = await full.client.getPrompt({ name: 'move_to_service', arguments: { address: 'help@acme.test', inbox: seed.inboxId } });
    const text = got.messages.map((m) => (m.content.type === 'text' ? m.content.text : '')).join('\n');
    assert.match(text, /help@acme\.test/);
    assert.ok(text.includes(seed.inboxId));
    const order = [
      'migration_detect',
      'migration_create',
      'migration_credentials_link',
      'migration_folders',
      'migration_scan',
      'migration_start',
      'migration_probe',
      'migration_finish',
    ];
    const steps = text.slice(text.indexOf('Steps:'));
    const positions = order.map((name) => steps.indexOf(name));
    assert.ok(
      positions.every((p) => p >= 0),
      JSON.stringify(positions),
    );
    assert.deepEqual(
      positions,
      [...positions].sort((a, b) => a - b),
      'in the order of the steps',
    );
    assert.match(text, /only read/);
    assert.match(text, /Never ask for, accept or repeat a password/);
    assert.match(text, /dry run/);
    assert.match(text, /test message/);
  });

  test('migration tools need migrations:manage and no inbox limit: otherwise a tool error with code forbidden, and nothing is created', async () => {
    const readOnly = await connectMcp(s, await keyWith(['conversations:read']));
    const limited = await connectMcp(s, await keyWith(['migrations:manage'], [seed.inboxId]));
    const manager = await connectMcp(s, await keyWith(['migrations:manage']));
    try {
      for (const [session, why] of [
        [readOnly, /lacks the scope migrations:manage/],
        [limited, /not allowed to keys limited to some inboxes/],
      ] as const) {
        const presets = await session.call('migration_presets');
        assert.equal(presets.isError, true);
        assert.equal(presets.body.error.code, 'forbidden');
        assert.equal(presets.body.error.status, 403);
        assert.match(presets.body.error.message, why);
        const created = await session.call('migration_create', {
          source_address: 'help@acme.test',
          provider: 'imap',
          imap: { host: 'imap.acme.test' },
          inbox_id: seed.inboxId,
        });
        assert.equal(created.body.error.code, 'forbidden');
      }
      assert.equal((await s.app.db.selectFrom('mailbox_migrations').select('id').execute()).length, 0, 'nothing was created');
      const ok = await manager.call('migration_presets');
      assert.equal(ok.isError, false);
      assert.ok(ok.body.data.some((p: { id: string }) => p.id === 'imap'));
      // The same refusal codes as the API: an unknown migration, a step not allowed now.
      const missing = await manager.call('migration_status', { migration_id: 'mig_nope' });
      assert.equal(missing.body.error.code, 'not_found');
      const draft = await manager.call('migration_create', { provider: 'imap', source_address: 'help@acme.test', imap: { host: 'imap.acme.test' } });
      assert.equal(draft.isError, false, draft.text);
      const early = await manager.call('migration_start', { migration_id: draft.body.migration.id });
      assert.equal(early.body.error.code, 'migration_state');
      assert.equal(early.body.error.state, 'draft');
      assert.ok(Array.isArray(early.body.error.allowed_actions));
      const invalid = await manager.call('migration_update', { migration_id: draft.body.migration.id, date_from: 'yesterday' });
      assert.equal(invalid.body.error.code, 'invalid_request');
      const wrongType = await manager.call('migration_finish', { migration_id: draft.body.migration.id, force: 'yes' });
      assert.equal(wrongType.isError, true, 'input that does not match the schema is a tool error');
      assert.match(wrongType.text, /force/);
      // Conversation tools need their scope too.
      const noWrite = await readOnly.call('set_conversation_status', { conversation_id: conversationId, status: 'closed' });
      assert.equal(noWrite.body.error.code, 'forbidden');
      assert.match(noWrite.body.error.message, /conversations:write/);
      const managerReads = await manager.call('search_conversations', { q: 'printer' });
      assert.equal(managerReads.body.error.code, 'forbidden');
    } finally {
      await readOnly.close();
      await limited.close();
      await manager.close();
    }
  });

  test('an inbox limit applies to every conversation tool and to the inbox and channel lists', async () => {
    const limited = await connectMcp(s, await keyWith(['conversations:read', 'conversations:write'], [seed.inboxId]));
    try {
      const inboxes = await limited.call('list_inboxes');
      assert.deepEqual(
        inboxes.body.data.map((i: { id: string }) => i.id),
        [seed.inboxId],
      );
      assert.deepEqual(
        inboxes.body.data[0].channels.map((c: { address: string }) => c.address),
        [supportAddress],
      );
      assert.equal(inboxes.body.data[0].channels[0].smtp.password_set, true);
      assert.ok(!inboxes.text.includes(SINK_LOGIN.password), 'the SMTP password never leaves');
      const channels = await limited.call('list_channels', { inbox_id: otherInboxId });
      assert.equal(channels.body.error.code, 'not_found');
      const other = await limited.call('read_conversation', { conversation_id: otherConversationId });
      assert.equal(other.body.error.code, 'not_found');
      const note = await limited.call('add_note', { conversation_id: otherConversationId, body: 'hidden' });
      assert.equal(note.body.error.code, 'not_found');
      const search = await limited.call('search_conversations', { q: 'invoice' });
      assert.deepEqual(search.body.conversations, [], 'another inbox’s conversation is not found');
      const list = await limited.call('list_conversations', {});
      assert.deepEqual(
        list.body.data.map((c: { id: string }) => c.id),
        [conversationId],
      );
      const all = await full.call('list_inboxes');
      assert.equal(all.body.data.length, 2);
    } finally {
      await limited.close();
    }
  });

  test('conversation tools: search, read, reply (mailed), note, assign, status and labels, as the API does them', async () => {
    const found = await full.call('search_conversations', { q: 'printer fire' });
    assert.equal(found.isError, false, found.text);
    assert.deepEqual(
      found.body.conversations.map((h: { conversation: { id: string } }) => h.conversation.id),
      [conversationId],
    );
    const read = await full.call('read_conversation', { conversation_id: conversationId });
    assert.equal(read.body.conversation.subject, 'Printer on fire');
    assert.match(read.body.messages[0].body, /on fire/);

    const reply = await full.call('reply', { conversation_id: conversationId, body: 'Please unplug it.' });
    assert.equal(reply.isError, false, reply.text);
    assert.equal(reply.body.kind, 'message');
    assert.equal(reply.body.status, 'pending');
    await s.app.jobs.drain();
    const [mailed] = await sink.waitFor(1);
    assert.deepEqual(mailed.to, ['ada@customer.test']);
    assert.match(mailed.parsed.text ?? '', /Please unplug it\./);

    const note = await full.call('add_note', { conversation_id: conversationId, body: 'Customer is calm.', member_id: seed.ownerId });
    assert.equal(note.body.kind, 'note');
    assert.equal(note.body.author.member_id, seed.ownerId);
    const assigned = await full.call('assign_conversation', { conversation_id: conversationId, assignee_id: seed.ownerId });
    assert.equal(assigned.body.assignee_id, seed.ownerId);
    const nobody = await full.call('assign_conversation', { conversation_id: conversationId, assignee_id: 'per_nobody' });
    assert.equal(nobody.isError, true);
    assert.equal(nobody.body.error.status, 400);
    const closed = await full.call('set_conversation_status', { conversation_id: conversationId, status: 'closed' });
    assert.equal(closed.body.status, 'closed');
    const labelled = await full.call('set_conversation_labels', { conversation_id: conversationId, labels: ['hardware', 'urgent'] });
    assert.deepEqual([...labelled.body.labels].sort(), ['hardware', 'urgent']);
    const api = await s.request('GET', `/v1/conversations/${conversationId}`, { token: seed.apiKey });
    assert.deepEqual(
      { status: api.body.status, assignee: api.body.assignee_id, labels: [...api.body.labels].sort() },
      { status: 'closed', assignee: seed.ownerId, labels: ['hardware', 'urgent'] },
    );
    const messages = await s.request('GET', `/v1/conversations/${conversationId}/messages?order=asc`, { token: seed.apiKey });
    assert.deepEqual(
      messages.body.data.filter((m: { kind: string }) => m.kind !== 'event').map((m: { kind: string; body: string }) => m.kind),
      ['message', 'message', 'note'],
    );
    const members = await full.call('list_members');
    assert.ok(members.body.data.some((m: { person_id: string }) => m.person_id === seed.ownerId));
  });

  test('each call is logged by tool and outcome, never with its arguments', async () => {
    const marker = `marker-${Date.now()}`;
    await full.call('add_note', { conversation_id: conversationId, body: marker });
    const lines = s.logs.filter((l) => l.msg === 'mcp tool' && l.tool === 'add_note');
    assert.ok(lines.length > 0);
    assert.ok(!s.rawLogs.some((l) => l.includes(marker)), 'a note’s text is not logged');
  });
});
