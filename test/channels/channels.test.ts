// Channels after creation: PATCH of e-mail and chat channels (password sealed, null clears, fields
// of the other kind refused), DELETE (550 and refused chat key at once, conversations stay, 409 while
// a broadcast sends through it) and the SMTP test against a real local SMTP server.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { createChatChannel } from '../../src/channels/service.js';
import { HOUR, ManualClock, MINUTE } from '../../src/platform/clock.js';
import { addresses, createBroadcast, schedule } from '../helpers/broadcasts.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverWithFile } from '../helpers/lifecycle.js';
import { eventsAfter, INGRESS_SECRET, ingressPort, lastEventSeq, SINK_LOGIN, SmtpDialog, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

const ORIGIN = 'https://shop.example.com';

/** A port on 127.0.0.1 where nothing listens. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

describe('channels after creation', () => {
  let s: TestServer;
  let clock: ManualClock;
  let seed: Seed;
  let sink: SmtpSink;

  before(async () => {
    clock = new ManualClock('2031-04-01T09:00:00Z');
    sink = await startSmtpSink(SINK_LOGIN);
    s = await startTestServer({ clock, env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
  });
  after(async () => {
    await s.stop();
    await sink.close();
  });

  const row = (id: string) => s.app.db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirst();
  const patch = (id: string, body: unknown, token = seed.ownerToken) => s.request('PATCH', `/v1/channels/${id}`, { token, body });

  test('PATCH of an e-mail channel: SMTP settings, a new password sealed and shown only as set, null clears', async () => {
    const ch = await seedEmailChannel(s.app, seed);
    const seq = await lastEventSeq(s);
    const r = await patch(ch.id, {
      smtp_host: 'smtp.example.net',
      tls: 'tls',
      smtp_username: 'mailer',
      smtp_password: 'new-secret-pw-1',
      display_name: 'Acme Help',
      from_address: 'Help@Example.com',
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.smtp, { host: 'smtp.example.net', port: 465, tls: 'tls', username: 'mailer', password_set: true });
    assert.equal(r.body.display_name, 'Acme Help');
    assert.equal(r.body.from_address, 'help@example.com');
    assert.ok(!JSON.stringify(r.body).includes('new-secret-pw-1'), 'the answer never holds the password');
    const stored = (await row(ch.id))!;
    assert.ok(stored.smtp_password_sealed && !stored.smtp_password_sealed.includes('new-secret-pw-1'));
    assert.equal(s.app.sealer.open(stored.smtp_password_sealed), 'new-secret-pw-1');
    const events = (await eventsAfter(s, seq)).filter((e) => e.type === 'channel.updated');
    assert.equal(events.length, 1);
    assert.equal(events[0].webhook, 0);
    assert.ok(events[0].data.changed.includes('smtp_password'));
    assert.ok(
      !JSON.stringify(events).includes('new-secret-pw-1') && !JSON.stringify(events).includes(stored.smtp_password_sealed),
      'events never hold the password',
    );
    assert.ok(!s.rawLogs.join('\n').includes('new-secret-pw-1'), 'logs never hold the password');

    // The port follows a TLS mode change while it is the old default; an explicit port stays.
    assert.equal((await patch(ch.id, { tls: 'starttls' })).body.smtp.port, 587);
    assert.equal((await patch(ch.id, { smtp_port: 2525 })).body.smtp.port, 2525);
    assert.equal((await patch(ch.id, { tls: 'none' })).body.smtp.port, 2525);
    // Changing the user name keeps the password; null deletes the password; null host removes the account.
    assert.equal((await patch(ch.id, { smtp_username: 'other' })).body.smtp.password_set, true);
    assert.equal((await patch(ch.id, { smtp_password: null })).body.smtp.password_set, false);
    assert.equal((await row(ch.id))!.smtp_password_sealed, null);
    const removed = await patch(ch.id, { smtp_host: null });
    assert.equal(removed.body.smtp, null);
    assert.deepEqual(
      (({ smtp_host, smtp_port, smtp_tls, smtp_username, smtp_password_sealed }) => [smtp_host, smtp_port, smtp_tls, smtp_username, smtp_password_sealed])(
        (await row(ch.id))!,
      ),
      [null, null, null, null, null],
    );
  });

  test('PATCH refuses bad input and changes nothing', async () => {
    const ch = await seedEmailChannel(s.app, seed, { smtpPort: sink.port });
    const chat = await createChatChannel(s.app, { workspaceId: seed.workspaceId, inboxId: seed.inboxId, name: 'Site', origins: [ORIGIN] });
    const beforeMail = await row(ch.id);
    const beforeChat = await row(chat.id);
    const refused: [string, unknown, number, RegExp?][] = [
      [ch.id, {}, 400, /nothing to change/],
      [ch.id, { smtp_password: '' }, 400, /null to delete/],
      [ch.id, { smtp_port: 0 }, 400],
      [ch.id, { smtp_port: 70000 }, 400],
      [ch.id, { tls: 'ssl' }, 400],
      [ch.id, { smtp_host: 'not a host!' }, 400, /host/],
      [ch.id, { smtp_host: null, smtp_port: 25 }, 400, /removes the SMTP account/],
      [ch.id, { origins: [ORIGIN] }, 400, /field of chat channels/],
      [ch.id, { from_address: 'not-an-address' }, 400],
      [ch.id, { address: 'new@example.com' }, 400],
      [ch.id, { name: 'ok', smtp_port: 99999 }, 400],
      [chat.id, { smtp_host: 'smtp.example.net' }, 400, /field of e-mail channels/],
      [chat.id, { origins: [] }, 400],
      [chat.id, { origins: ['https://shop.example.com/path'] }, 400, /origin/],
      [chat.id, { origins: ['ftp://shop.example.com'] }, 400, /origin/],
      [chat.id, { origins: ['not an origin'] }, 400, /origin/],
      [chat.id, { greeting: 'x'.repeat(2001) }, 400],
      [chat.id, { allow_anonymous: 'yes' }, 400],
    ];
    for (const [id, body, status, message] of refused) {
      const r = await patch(id, body);
      assert.equal(r.status, status, JSON.stringify(body));
      assert.ok(r.body.error?.code, 'error shape');
      if (message) assert.match(r.body.error.message, message, JSON.stringify(body));
    }
    assert.deepEqual(await row(ch.id), beforeMail);
    assert.deepEqual(await row(chat.id), beforeChat);
    // The same password again counts as a change (it is sealed anew); an agent may not change channels.
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    assert.equal((await patch(ch.id, { name: 'x' }, agent.token)).status, 403);
    assert.equal((await patch('ch_missing', { name: 'x' })).status, 404);
  });

  test('PATCH of a chat channel: origins, greeting, flags; the widget sees them at once', async () => {
    const chat = await createChatChannel(s.app, { workspaceId: seed.workspaceId, inboxId: seed.inboxId, name: 'Site', origins: [ORIGIN], greeting: 'Hi' });
    const r = await patch(chat.id, {
      origins: ['https://new.example.com', 'https://new.example.com/'],
      greeting: null,
      allow_anonymous: true,
      ask_email_offline: false,
      name: 'New site',
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.origins, ['https://new.example.com']);
    assert.deepEqual([r.body.greeting, r.body.allow_anonymous, r.body.ask_email_offline, r.body.name], [null, true, false, 'New site']);
    assert.equal(
      (await s.request('GET', `/v1/widget/config?public_key=${chat.public_key}`, { headers: { origin: ORIGIN } })).status,
      403,
      'the old origin is refused',
    );
    const config = await s.request('GET', `/v1/widget/config?public_key=${chat.public_key}`, { headers: { origin: 'https://new.example.com' } });
    assert.equal(config.status, 200);
    assert.equal(config.body.channel.ask_email_offline, false);
  });

  test('DELETE of an e-mail channel: 550 at once, its conversations stay in the inbox', async () => {
    const ch = await seedEmailChannel(s.app, seed);
    const conv = await deliverWithFile(s, ch.address!);
    const seq = await lastEventSeq(s);
    const r = await s.request('DELETE', `/v1/channels/${ch.id}`, { token: seed.ownerToken });
    assert.equal(r.status, 204);
    const { dialog } = await SmtpDialog.open(ingressPort(s));
    await dialog.send('EHLO client.example');
    assert.match(await dialog.send('MAIL FROM:<customer@example.com>'), /^250/);
    assert.match(await dialog.send(`RCPT TO:<${ch.address}>`), /^550/);
    dialog.close();
    const kept = await s.request('GET', `/v1/conversations/${conv.conversation_id}`, { token: seed.apiKey });
    assert.equal(kept.status, 200, 'the conversation stays');
    assert.equal(kept.body.inbox_id ?? kept.body.conversation?.inbox_id, seed.inboxId);
    assert.ok((await eventsAfter(s, seq)).some((e) => e.type === 'channel.deleted' && e.data.channel.id === ch.id));
    assert.equal((await s.request('DELETE', `/v1/channels/${ch.id}`, { token: seed.ownerToken })).status, 404);
  });

  test('DELETE of a chat channel: its key, sessions and open sockets stop at once', async () => {
    const chat = await createChatChannel(s.app, {
      workspaceId: seed.workspaceId,
      inboxId: seed.inboxId,
      name: 'Site',
      origins: [ORIGIN],
      allowAnonymous: true,
    });
    const visitor = await s.request('POST', '/v1/widget/sessions', { body: { public_key: chat.public_key }, headers: { origin: ORIGIN } });
    assert.equal(visitor.status, 201);
    const sock = new WebSocket(`${s.url.replace('http', 'ws')}/v1/widget/realtime?token=${visitor.body.token}`, { headers: { origin: ORIGIN } });
    const closed = new Promise<number>((resolve) => sock.on('close', (code) => resolve(code)));
    await new Promise((r) => sock.once('message', r));
    assert.equal((await s.request('DELETE', `/v1/channels/${chat.id}`, { token: seed.ownerToken })).status, 204);
    // At once, not at the socket's first heartbeat check (25 s after it opened); 15 s leaves a loaded machine room.
    assert.equal(await Promise.race([closed, new Promise((r) => setTimeout(() => r('still open after 15 s'), 15_000).unref())]), 4403);
    assert.equal((await s.request('GET', `/v1/widget/config?public_key=${chat.public_key}`, { headers: { origin: ORIGIN } })).status, 404);
    assert.equal((await s.request('POST', '/v1/widget/sessions', { body: { public_key: chat.public_key }, headers: { origin: ORIGIN } })).status, 404);
    assert.equal((await s.request('GET', '/v1/widget/conversations', { token: visitor.body.token, headers: { origin: ORIGIN } })).status, 401);
  });

  test('DELETE is refused with 409 while a broadcast or a migration that has not finished uses the channel', async () => {
    const ch = await seedEmailChannel(s.app, seed, { smtpPort: sink.port });
    const b = await createBroadcast(s, seed.apiKey, seed.inboxId, addresses(2), { channel_id: ch.id });
    assert.equal((await schedule(s, seed.apiKey, b.id, { send_at: new Date(clock.now().getTime() + HOUR).toISOString() })).status, 200);
    const r = await s.request('DELETE', `/v1/channels/${ch.id}`, { token: seed.ownerToken });
    assert.equal(r.status, 409);
    assert.equal(r.body.error.code, 'channel_in_use');
    assert.deepEqual(r.body.error.broadcast_ids, [b.id]);
    assert.ok(await row(ch.id), 'nothing changed');
    assert.equal((await s.request('POST', `/v1/broadcasts/${b.id}/cancel`, { token: seed.apiKey })).status, 200);
    // A migration that moves mail into the channel holds it the same way.
    const m = await s.request('POST', '/v1/migrations', {
      token: seed.apiKey,
      body: { provider: 'imap', imap: { host: 'imap.example.com' }, source_address: 'old@example.com', inbox_id: seed.inboxId, channel_id: ch.id },
    });
    assert.equal(m.status, 201, JSON.stringify(m.body));
    const held = await s.request('DELETE', `/v1/channels/${ch.id}`, { token: seed.ownerToken });
    assert.equal(held.status, 409);
    assert.deepEqual([held.body.error.broadcast_ids, held.body.error.migration_ids], [[], [m.body.id]]);
    assert.equal((await s.request('POST', `/v1/migrations/${m.body.id}/cancel`, { token: seed.apiKey })).status, 200);
    assert.equal((await s.request('DELETE', `/v1/channels/${ch.id}`, { token: seed.ownerToken })).status, 204);
  });

  test('smtp-test: success, wrong password and wrong port say which step failed; no mail is sent; the password never shows', async () => {
    const good = await seedEmailChannel(s.app, seed, { smtpPort: sink.port });
    const wrongPassword = await seedEmailChannel(s.app, seed, { smtpPort: sink.port, password: 'wrong-password-xyz' });
    const wrongPort = await seedEmailChannel(s.app, seed, { smtpPort: await closedPort() });
    const noSmtp = await seedEmailChannel(s.app, seed);
    const mails = sink.messages.length;
    const test = (id: string) => s.request('POST', `/v1/channels/${id}/smtp-test`, { token: seed.ownerToken });

    const ok = await test(good.id);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.ok, true);
    assert.equal(ok.body.failed_step, null);
    assert.deepEqual(
      ok.body.steps.map((x: { step: string; status: string }) => `${x.step}:${x.status}`),
      ['dns:ok', 'connect:ok', 'tls:skipped', 'auth:ok'],
    );

    const auth = await test(wrongPassword.id);
    assert.equal(auth.status, 200);
    assert.equal(auth.body.ok, false);
    assert.equal(auth.body.failed_step, 'auth');
    assert.match(auth.body.message, /535/, 'the server’s answer');
    assert.ok(!JSON.stringify(auth.body).includes('wrong-password-xyz'));
    assert.deepEqual(
      auth.body.steps.map((x: { step: string; status: string }) => `${x.step}:${x.status}`),
      ['dns:ok', 'connect:ok', 'tls:ok', 'auth:failed'],
    );

    const port = await test(wrongPort.id);
    assert.equal(port.body.failed_step, 'connect');
    assert.match(port.body.message, /ECONNREFUSED/);
    assert.deepEqual(
      port.body.steps.map((x: { step: string; status: string }) => `${x.step}:${x.status}`),
      ['dns:ok', 'connect:failed', 'tls:skipped', 'auth:skipped'],
    );

    // A name that does not resolve fails at DNS.
    assert.equal((await patch(wrongPort.id, { smtp_host: 'no-such-host.invalid' })).status, 200);
    assert.equal((await test(wrongPort.id)).body.failed_step, 'dns');

    const none = await test(noSmtp.id);
    assert.equal(none.status, 409);
    assert.equal(none.body.error.code, 'smtp_not_configured');
    assert.equal(sink.messages.length, mails, 'no mail was sent');
    assert.ok(!s.rawLogs.join('\n').includes('wrong-password-xyz') && !s.rawLogs.join('\n').includes(SINK_LOGIN.password), 'logs never hold a password');
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    assert.equal((await s.request('POST', `/v1/channels/${good.id}/smtp-test`, { token: agent.token })).status, 403);
  });

  test('smtp-test is rate limited per channel like the migration connection test (5 per 10 minutes)', async () => {
    const ch = await seedEmailChannel(s.app, seed, { smtpPort: sink.port });
    const other = await seedEmailChannel(s.app, seed, { smtpPort: sink.port });
    const test = (id: string) => s.request('POST', `/v1/channels/${id}/smtp-test`, { token: seed.ownerToken });
    for (let i = 0; i < 5; i++) {
      assert.equal((await test(ch.id)).status, 200);
      clock.advance(MINUTE);
    }
    const limited = await test(ch.id);
    assert.equal(limited.status, 429);
    assert.equal(limited.body.error.code, 'rate_limited');
    // The oldest test leaves the window 10 minutes after it ran, 5 minutes from now.
    assert.equal(limited.headers.get('retry-after'), String(5 * 60));
    assert.equal((await test(other.id)).status, 200, 'another channel has its own window');
    clock.advance(5 * MINUTE + 1000);
    assert.equal((await test(ch.id)).status, 200);
  });

  test('the routes are in /v1/openapi.json with their schemas', async () => {
    const doc = (await s.request('GET', '/v1/openapi.json')).body;
    const path = doc.paths['/v1/channels/{channelId}'];
    assert.ok(path.patch.requestBody.content['application/json'].schema);
    assert.ok(path.patch.responses['200'].content['application/json'].schema);
    assert.ok(path.delete.responses['204']);
    assert.ok(doc.paths['/v1/channels/{channelId}/smtp-test'].post.responses['200'].content['application/json'].schema);
    for (const name of ['ChannelPatch', 'SmtpTest', 'Channel']) assert.ok(doc.components.schemas[name], name);
    assert.ok(doc.components.schemas.ChannelPatch.properties.smtp_password);
  });
});
