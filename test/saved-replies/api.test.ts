import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/api-keys/service.js';
import { createChatChannel } from '../../src/channels/service.js';
import { iso } from '../../src/platform/clock.js';
import { newId } from '../../src/platform/ids.js';
import { deleteWorkspaceSavedReplies, MAX_PERSONAL_REPLIES } from '../../src/saved-replies/service.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { rawMail, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

const SECRET = 'saved-replies-ingress';

describe('saved replies and signatures', () => {
  let s: TestServer;
  let seed: Seed;
  let sink: SmtpSink;
  let address: string;
  let agent: { personId: string; token: string };
  let admin: { personId: string; token: string };

  before(async () => {
    sink = await startSmtpSink({ username: SINK_LOGIN.username, password: SINK_LOGIN.password });
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: SECRET } });
    await s.app.jobs.stop(); // mail goes out only when a test drains the jobs
    seed = await seedWorkspace(s.app);
    address = (await seedEmailChannel(s.app, seed, { smtpPort: sink.port })).address!;
    agent = await addPerson(s.app, seed.workspaceId, 'agent');
    admin = await addPerson(s.app, seed.workspaceId, 'admin');
    await s.app.db.updateTable('people').set({ name: 'Grace Hopper' }).where('id', '=', agent.personId).execute();
  });
  after(async () => {
    await s.stop();
    await sink.close();
  });

  async function customerMail(from: string, subject = 'Where is my order?') {
    const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, {
      raw: rawMail({ To: address, From: from, Subject: subject }),
      token: SECRET,
    });
    assert.equal(r.status, 201);
    return r.body.data[0].conversation_id as string;
  }
  const key = async (scopes: string[]) => (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: `k-${scopes.join('+')}`, scopes })).secret;
  const list = async (token: string, query = '') => s.request('GET', `/v1/saved-replies${query}`, { token });

  test('workspace replies are for every member, personal ones for their owner only', async () => {
    const shared = await s.request('POST', '/v1/saved-replies', {
      token: seed.ownerToken,
      body: { scope: 'workspace', name: 'Refund', body: 'Hi {{contact.first_name}}, your refund is on its way.' },
    });
    assert.equal(shared.status, 201);
    assert.equal(shared.body.scope, 'workspace');
    assert.equal(shared.body.owner_id, null);

    // Agents use workspace replies but may not write them.
    const refused = await s.request('POST', '/v1/saved-replies', { token: agent.token, body: { scope: 'workspace', name: 'Agent shared', body: 'x' } });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'forbidden');
    assert.equal((await s.request('PATCH', `/v1/saved-replies/${shared.body.id}`, { token: agent.token, body: { body: 'changed' } })).status, 403);
    assert.equal((await s.request('DELETE', `/v1/saved-replies/${shared.body.id}`, { token: agent.token })).status, 403);
    // Admins edit them.
    const edited = await s.request('PATCH', `/v1/saved-replies/${shared.body.id}`, {
      token: admin.token,
      body: { body: 'Hi {{contact.first_name}}, your refund is on its way!' },
    });
    assert.equal(edited.status, 200);
    assert.match(edited.body.body, /on its way!$/);

    // A member's own reply (personal is the default for members).
    const mine = await s.request('POST', '/v1/saved-replies', {
      token: agent.token,
      body: { name: 'Thanks', body: 'Thanks, {{contact.name}}! — {{member.first_name}}' },
    });
    assert.equal(mine.status, 201);
    assert.equal(mine.body.scope, 'personal');
    assert.equal(mine.body.owner_id, agent.personId);

    const agentSees = (await list(agent.token)).body.data.map((r: any) => r.id);
    assert.deepEqual(agentSees, [shared.body.id, mine.body.id]); // by name: Refund, Thanks
    const ownerSees = (await list(seed.ownerToken)).body.data.map((r: any) => r.id);
    assert.ok(ownerSees.includes(shared.body.id) && !ownerSees.includes(mine.body.id), 'nobody else sees a personal reply, owners included');
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { body: 'stolen' }],
      ['DELETE', undefined],
    ] as const) {
      const r = await s.request(method, `/v1/saved-replies/${mine.body.id}`, { token: seed.ownerToken, body });
      assert.equal(r.status, 404, `${method} of another member's personal reply`);
    }
    assert.equal((await list(agent.token, '?scope=personal')).body.data.length, 1);
    assert.equal((await s.request('GET', `/v1/saved-replies/${mine.body.id}`, { token: agent.token })).body.body, mine.body.body);

    // API keys: conversations:write reads workspace replies; workspace:manage writes them; no personal ones.
    const writer = await key(['conversations:write']);
    const keySees = await list(writer);
    assert.equal(keySees.status, 200);
    assert.deepEqual(
      keySees.body.data.map((r: any) => r.id),
      [shared.body.id],
    );
    assert.equal((await list(await key(['conversations:read']))).status, 403);
    assert.equal((await s.request('POST', '/v1/saved-replies', { token: writer, body: { name: 'By key', body: 'x' } })).status, 403);
    const manager = await key(['workspace:manage', 'conversations:write']);
    const byKey = await s.request('POST', '/v1/saved-replies', { token: manager, body: { name: 'By key', body: 'Hello from the key' } });
    assert.equal(byKey.status, 201);
    assert.equal(byKey.body.scope, 'workspace');
    assert.equal((await s.request('POST', '/v1/saved-replies', { token: manager, body: { scope: 'personal', name: 'Mine', body: 'x' } })).status, 403);
    assert.equal((await s.request('DELETE', `/v1/saved-replies/${byKey.body.id}`, { token: manager })).status, 204);
    assert.equal((await s.request('GET', `/v1/saved-replies/${byKey.body.id}`, { token: manager })).status, 404);
  });

  test('bad input is refused with a 400 or 409 that names the problem, and nothing is stored', async () => {
    const count = async () =>
      Number(
        (
          await s.app.db
            .selectFrom('saved_replies')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await count();
    const unknown = await s.request('POST', '/v1/saved-replies', {
      token: agent.token,
      body: { name: 'Bad', body: 'Hi {{contact.nickname}} and {{ order.id }}, {{contact.name}}' },
    });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error.code, 'invalid_request');
    assert.match(unknown.body.error.message, /\{\{contact\.nickname\}\}/);
    assert.deepEqual(unknown.body.error.unknown_placeholders, ['{{contact.nickname}}', '{{ order.id }}']);
    for (const body of [
      { name: '  ', body: 'x' },
      { name: 'x'.repeat(65), body: 'x' },
      { name: 'two\nlines', body: 'x' },
      { name: 'Empty', body: '   ' },
      { name: 'Huge', body: 'x'.repeat(10_001) },
      { name: 'Long fallback', body: `{{contact.name|${'y'.repeat(101)}}}` },
      { name: 'Scope', body: 'x', scope: 'team' },
      { name: 'Extra', body: 'x', owner_id: seed.ownerId },
    ]) {
      const r = await s.request('POST', '/v1/saved-replies', { token: agent.token, body });
      assert.equal(r.status, 400, JSON.stringify(body).slice(0, 80));
      assert.equal(r.body.error.code, 'invalid_request');
    }
    assert.equal(await count(), before);

    const first = await s.request('POST', '/v1/saved-replies', { token: agent.token, body: { name: 'Shipping', body: 'It ships today.' } });
    assert.equal(first.status, 201);
    const twin = await s.request('POST', '/v1/saved-replies', { token: agent.token, body: { name: 'SHIPPING', body: 'again' } });
    assert.equal(twin.status, 409);
    assert.match(twin.body.error.message, /SHIPPING/);
    // The same name is fine for someone else, and for a workspace reply.
    assert.equal((await s.request('POST', '/v1/saved-replies', { token: admin.token, body: { name: 'Shipping', body: 'x' } })).status, 201);
    const renamed = await s.request('PATCH', `/v1/saved-replies/${first.body.id}`, { token: agent.token, body: { name: 'Thanks' } });
    assert.equal(renamed.status, 409, 'renaming onto an existing name');
    const unknownOnEdit = await s.request('PATCH', `/v1/saved-replies/${first.body.id}`, { token: agent.token, body: { body: '{{contact.age}}' } });
    assert.equal(unknownOnEdit.status, 400);
    assert.equal((await s.request('GET', `/v1/saved-replies/${first.body.id}`, { token: agent.token })).body.body, 'It ships today.');

    // The count limit per member.
    const person = await addPerson(s.app, seed.workspaceId, 'agent');
    const now = iso(s.app.clock.now());
    const rows = Array.from({ length: MAX_PERSONAL_REPLIES }, (_, i) => ({
      id: newId('sr'),
      workspace_id: seed.workspaceId,
      scope: 'personal' as const,
      owner_id: person.personId,
      owner_key: person.personId,
      name: `r${i}`,
      name_key: `r${i}`,
      body: 'x',
      search_text: `r${i}\nx`,
      created_by: person.personId,
      created_at: now,
      updated_at: now,
    }));
    await s.app.db.insertInto('saved_replies').values(rows).execute();
    const full = await s.request('POST', '/v1/saved-replies', { token: person.token, body: { name: 'one more', body: 'x' } });
    assert.equal(full.status, 409);
    assert.equal(full.body.error.code, 'saved_reply_limit');
    assert.equal(full.body.error.max, MAX_PERSONAL_REPLIES);
  });

  test('q finds replies by name or body, ignoring case, for the # picker; pages follow names', async () => {
    const person = await addPerson(s.app, seed.workspaceId, 'agent');
    for (const [name, body] of [
      ['Password reset', 'Use the link to RESET it.'],
      ['Invoice', 'Your invoice is attached.'],
      ['Discount', 'Here is 100% off_code.'],
      ['Greeting', 'Hello {{contact.name}}'],
    ]) {
      assert.equal((await s.request('POST', '/v1/saved-replies', { token: person.token, body: { name, body } })).status, 201);
    }
    const names = async (q: string) => (await list(person.token, `?scope=personal&q=${encodeURIComponent(q)}`)).body.data.map((r: any) => r.name);
    assert.deepEqual(await names('reset'), ['Password reset']);
    assert.deepEqual(await names('INVOICE'), ['Invoice']);
    assert.deepEqual(await names('attached'), ['Invoice']);
    assert.deepEqual(await names('100%'), ['Discount']);
    assert.deepEqual(await names('%'), ['Discount'], '% is a character, not a wildcard');
    assert.deepEqual(await names('_'), ['Discount'], '_ is a character, not a wildcard');
    assert.deepEqual(await names('pass link'), ['Password reset'], 'every word must match');
    assert.deepEqual(await names('zzz'), []);
    const page1 = await list(person.token, '?scope=personal&limit=3');
    assert.deepEqual(
      page1.body.data.map((r: any) => r.name),
      ['Discount', 'Greeting', 'Invoice'],
    );
    const page2 = await list(person.token, `?scope=personal&limit=3&cursor=${page1.body.next_cursor}`);
    assert.deepEqual(
      page2.body.data.map((r: any) => r.name),
      ['Password reset'],
    );
    assert.equal(page2.body.next_cursor, null);
    assert.equal((await list(person.token, '?cursor=bogus')).status, 400);
  });

  test('render-reply fills placeholders for the conversation; missing values render sensibly', async () => {
    const named = await customerMail('Ada Lovelace <ada@cust.example>', 'Order 42');
    const anonymous = await customerMail('nobody@cust.example', 'No name');
    const reply = await s.request('POST', '/v1/saved-replies', {
      token: agent.token,
      body: {
        name: 'Full',
        body: 'Hi {{contact.first_name}} ({{ contact.name }}, {{contact.email}}), re "{{conversation.subject}}" — {{member.name}} of {{inbox.name}}',
      },
    });
    assert.equal(reply.status, 201);
    const r = await s.request('POST', `/v1/conversations/${named}/render-reply`, { token: agent.token, body: { saved_reply_id: reply.body.id } });
    assert.equal(r.status, 200);
    assert.equal(r.body.body, 'Hi Ada (Ada Lovelace, ada@cust.example), re "Order 42" — Grace Hopper of Support');
    const missing = await s.request('POST', `/v1/conversations/${anonymous}/render-reply`, {
      token: agent.token,
      body: { body: 'Hi {{contact.first_name}}, {{contact.name|friend}}. {{member.name|The team}}' },
    });
    assert.equal(missing.body.body, 'Hi there, friend. Grace Hopper');
    // The owner has no name: the fallback applies.
    const owner = await s.request('POST', `/v1/conversations/${anonymous}/render-reply`, {
      token: seed.ownerToken,
      body: { body: '{{member.name|The team}}' },
    });
    assert.equal(owner.body.body, 'The team');
    // Keys render as a member they name.
    const asAgent = await s.request('POST', `/v1/conversations/${named}/render-reply`, {
      token: seed.apiKey,
      body: { body: '{{member.first_name}}', member_id: agent.personId },
    });
    assert.equal(asAgent.body.body, 'Grace');

    const bad = await s.request('POST', `/v1/conversations/${named}/render-reply`, { token: agent.token, body: { body: '{{contact.age}}' } });
    assert.equal(bad.status, 400);
    assert.equal((await s.request('POST', `/v1/conversations/${named}/render-reply`, { token: agent.token, body: {} })).status, 400);
    assert.equal(
      (await s.request('POST', `/v1/conversations/${named}/render-reply`, { token: agent.token, body: { body: 'x', saved_reply_id: reply.body.id } })).status,
      400,
    );
    // Another member's personal reply does not render for the owner.
    assert.equal(
      (await s.request('POST', `/v1/conversations/${named}/render-reply`, { token: seed.ownerToken, body: { saved_reply_id: reply.body.id } })).status,
      404,
    );
    assert.equal((await s.request('POST', `/v1/conversations/cv_missing/render-reply`, { token: agent.token, body: { body: 'x' } })).status, 404);
  });

  test('e-mail replies carry the member’s then the inbox’s signature, as stored; notes carry none', async () => {
    const conversation = await customerMail('Ada Lovelace <ada@cust.example>', 'Signed');
    // Setting: members their own; owners and admins the inbox's.
    const mine = await s.request('PUT', '/v1/me/signature', { token: agent.token, body: { body: '{{member.name}}\nSupport engineer  \n' } });
    assert.equal(mine.status, 200);
    assert.equal(mine.body.body, '{{member.name}}\nSupport engineer');
    assert.equal((await s.request('GET', '/v1/me/signature', { token: agent.token })).body.body, '{{member.name}}\nSupport engineer');
    assert.equal((await s.request('GET', '/v1/me/signature', { token: admin.token })).body.body, '');
    assert.equal((await s.request('PUT', `/v1/inboxes/${seed.inboxId}/signature`, { token: agent.token, body: { body: 'x' } })).status, 403);
    const inbox = await s.request('PUT', `/v1/inboxes/${seed.inboxId}/signature`, {
      token: admin.token,
      body: { body: '{{inbox.name}} team · https://acme.example' },
    });
    assert.equal(inbox.status, 200);
    assert.equal(
      (await s.request('GET', `/v1/inboxes/${seed.inboxId}/signature`, { token: agent.token })).body.body,
      '{{inbox.name}} team · https://acme.example',
    );
    assert.equal((await s.request('GET', `/v1/inboxes/${seed.inboxId}/signature`, { token: await key(['conversations:read']) })).status, 200);
    assert.equal((await s.request('GET', `/v1/inboxes/${seed.inboxId}/signature`, { token: await key(['contacts:read']) })).status, 403);
    const elsewhere = await key(['conversations:read']);
    await s.app.db
      .updateTable('api_keys')
      .set({ inbox_ids: JSON.stringify(['inb_other']) })
      .where('prefix', '=', elsewhere.slice(0, 15))
      .execute();
    assert.equal(
      (await s.request('GET', `/v1/inboxes/${seed.inboxId}/signature`, { token: elsewhere })).status,
      404,
      'keys limited to other inboxes do not see it',
    );
    const badSig = await s.request('PUT', '/v1/me/signature', { token: agent.token, body: { body: 'Cheers {{member.nick}}' } });
    assert.equal(badSig.status, 400);
    assert.match(badSig.body.error.message, /member\.nick/);
    assert.equal((await s.request('PUT', '/v1/me/signature', { token: agent.token, body: { body: 'x'.repeat(2001) } })).status, 400);
    assert.equal(
      (await s.request('GET', '/v1/me/signature', { token: agent.token })).body.body,
      '{{member.name}}\nSupport engineer',
      'refused changes change nothing',
    );
    assert.equal((await s.request('PUT', '/v1/me/signature', { token: seed.apiKey, body: { body: 'x' } })).status, 403);

    const expected = 'Thanks, on it.\n\n-- \nGrace Hopper\nSupport engineer\n\n-- \nSupport team · https://acme.example';
    const sent = await s.request('POST', `/v1/conversations/${conversation}/messages`, { token: agent.token, body: { body: 'Thanks, on it.' } });
    assert.equal(sent.status, 201);
    assert.equal(sent.body.body, expected);
    const note = await s.request('POST', `/v1/conversations/${conversation}/messages`, { token: agent.token, body: { kind: 'note', body: 'VIP customer' } });
    assert.equal(note.body.body, 'VIP customer');
    // A key without a member gets the inbox's signature only; with html, the html is signed too.
    const byKey = await s.request('POST', `/v1/conversations/${conversation}/messages`, {
      token: seed.apiKey,
      body: { body: 'Automated update.', html: '<p>Automated update.</p>' },
    });
    assert.equal(byKey.body.body, 'Automated update.\n\n-- \nSupport team · https://acme.example');
    assert.match(byKey.body.html, /<p>Automated update\.<\/p><div class="svc-signature"><p>-- <br>Support team · https:\/\/acme\.example<\/p><\/div>$/);

    const count = sink.messages.length;
    await s.app.jobs.drain();
    const mails = await sink.waitFor(count + 2);
    const texts = mails.slice(count).map((m) => m.parsed.text!.trimEnd());
    assert.ok(texts.includes(expected), 'the mail is what was stored');
    assert.ok(!texts.some((t) => t.includes('VIP')), 'notes are never mailed');
    const keyMail = mails.slice(count).find((m) => m.parsed.text!.startsWith('Automated'))!;
    assert.match(String(keyMail.parsed.html), /Support team · https:\/\/acme\.example/);

    // Clearing the member's signature leaves the inbox's.
    assert.equal((await s.request('PUT', '/v1/me/signature', { token: agent.token, body: { body: '' } })).body.updated_at, null);
    const after = await s.request('POST', `/v1/conversations/${conversation}/messages`, { token: agent.token, body: { body: 'Done.' } });
    assert.equal(after.body.body, 'Done.\n\n-- \nSupport team · https://acme.example');
    await s.app.jobs.drain();
  });

  test('chat replies get no signature, and placeholders render in chat too', async () => {
    const origin = 'https://shop.example';
    const publicKey = (await createChatChannel(s.app, { workspaceId: seed.workspaceId, inboxId: seed.inboxId, name: 'Widget', origins: [origin] })).public_key!;
    const visitor = await s.request('POST', '/v1/widget/sessions', {
      body: { public_key: publicKey, email: 'vera@shop.example', name: 'Vera Rubin' },
      headers: { origin },
    });
    assert.equal(visitor.status, 201);
    const started = await s.request('POST', '/v1/widget/conversations', { token: visitor.body.token, body: { body: 'Hello?' }, headers: { origin } });
    const conversation = started.body.conversation.id;
    assert.equal((await s.request('PUT', '/v1/me/signature', { token: agent.token, body: { body: 'Grace, Acme' } })).status, 200);
    const rendered = await s.request('POST', `/v1/conversations/${conversation}/render-reply`, {
      token: agent.token,
      body: { body: 'Hi {{contact.first_name}}!' },
    });
    assert.equal(rendered.body.body, 'Hi Vera!');
    const reply = await s.request('POST', `/v1/conversations/${conversation}/messages`, { token: agent.token, body: { body: rendered.body.body } });
    assert.equal(reply.status, 201);
    assert.equal(reply.body.body, 'Hi Vera!');
  });

  test('a deleted workspace’s saved replies and signatures are removed by its deletion step', async () => {
    const other = await seedWorkspace(s.app);
    assert.equal((await s.request('POST', '/v1/saved-replies', { token: other.ownerToken, body: { name: 'A', body: 'a' } })).status, 201);
    assert.equal((await s.request('PUT', '/v1/me/signature', { token: other.ownerToken, body: { body: 'sig' } })).status, 200);
    assert.equal((await s.request('PUT', `/v1/inboxes/${other.inboxId}/signature`, { token: other.ownerToken, body: { body: 'sig' } })).status, 200);
    let total = 0;
    for (let n = -1; n !== 0; total += n) n = await deleteWorkspaceSavedReplies(s.app, other.workspaceId, 500);
    assert.equal(total, 3);
    for (const table of ['saved_replies', 'member_signatures', 'inbox_signatures'] as const) {
      assert.equal((await s.app.db.selectFrom(table).select('workspace_id').where('workspace_id', '=', other.workspaceId).execute()).length, 0, table);
    }
    assert.ok(
      (await s.app.db.selectFrom('saved_replies').select('id').where('workspace_id', '=', seed.workspaceId).execute()).length > 0,
      'other workspaces keep theirs',
    );
  });
});
