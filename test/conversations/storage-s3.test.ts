// The same attachment and raw-mail paths with SVC_STORAGE=s3, against an S3-compatible server (s3rver).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { INGRESS_SECRET, ingressPort, type S3Server, SINK_LOGIN, seedEmailChannel, sendToIngress, startS3 } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

describe('attachments and original e-mails on s3 storage', () => {
  let s3: S3Server;
  let s: TestServer;
  let seed: Seed;
  let sink: SmtpSink;
  let address: string;

  before(async () => {
    s3 = await startS3();
    sink = await startSmtpSink(SINK_LOGIN);
    s = await startTestServer({
      env: {
        SVC_INGRESS_SECRET: INGRESS_SECRET,
        SVC_STORAGE: 's3',
        SVC_S3_BUCKET: s3.bucket,
        SVC_S3_ENDPOINT: s3.endpoint,
        SVC_S3_REGION: 'us-east-1',
        SVC_S3_ACCESS_KEY_ID: 'S3RVER',
        SVC_S3_SECRET_ACCESS_KEY: 'S3RVER',
        SVC_S3_FORCE_PATH_STYLE: '1',
        SVC_S3_PREFIX: 'svc/',
      },
    });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    address = (await seedEmailChannel(s.app, seed, { smtpPort: sink.port })).address!;
  });
  after(async () => {
    await s.stop();
    await sink.close();
    await s3.close();
  });

  test('inbound attachment and .eml are stored in the bucket, served back, mailed out, and deleted with the contact', async () => {
    assert.equal(s.app.storage.kind, 's3');
    const png = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7) % 256));
    await sendToIngress(ingressPort(s), {
      from: 's3@cust.example',
      to: address,
      subject: 'On S3',
      text: 'with a file',
      attachments: [{ filename: 'x.png', content: png, contentType: 'image/png' }],
    });
    const msg = await s.app.db.selectFrom('messages').selectAll().where('subject', '=', 'On S3').executeTakeFirstOrThrow();
    const att = await s.app.db.selectFrom('attachments').selectAll().where('message_id', '=', msg.id).executeTakeFirstOrThrow();
    assert.equal(att.sha256, createHash('sha256').update(png).digest('hex'));
    const raw = { storage_key: msg.raw_storage_key! };
    assert.ok(await s.app.storage.exists(att.storage_key));
    assert.ok(await s.app.storage.exists(raw.storage_key));

    const dl = await fetch(`${s.url}/v1/attachments/${att.id}/content`, { headers: { authorization: `Bearer ${seed.apiKey}` } });
    assert.equal(dl.status, 200);
    assert.ok(Buffer.from(await dl.arrayBuffer()).equals(png));
    const eml = await fetch(`${s.url}/v1/conversations/${msg.conversation_id}/messages/${msg.id}/raw`, { headers: { authorization: `Bearer ${seed.apiKey}` } });
    assert.match(await eml.text(), /Subject: On S3/);

    const up = await s.request('POST', `/v1/conversations/${msg.conversation_id}/attachments?filename=reply.txt`, {
      token: seed.apiKey,
      raw: Buffer.from('reply file'),
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(up.status, 201);
    await s.request('POST', `/v1/conversations/${msg.conversation_id}/messages`, { token: seed.apiKey, body: { body: 'here', attachment_ids: [up.body.id] } });
    await s.app.jobs.drain();
    const [mail] = await sink.waitFor(1);
    assert.equal(mail.parsed.attachments[0].content.toString(), 'reply file');

    const conv = await s.request('GET', `/v1/conversations/${msg.conversation_id}`, { token: seed.apiKey });
    assert.equal((await s.request('DELETE', `/v1/contacts/${conv.body.contact_id}`, { token: seed.apiKey })).status, 200);
    await s.app.jobs.drain();
    for (const key of [att.storage_key, raw.storage_key]) assert.equal(await s.app.storage.exists(key), false);
  });
});
