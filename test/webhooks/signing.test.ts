// Signatures as Standard Webhooks defines them, checked against the official test vector and the
// standardwebhooks package; the retry delays and their jitter bounds.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { RETRY_JITTER, RETRY_SCHEDULE_MS, retryDelayMs } from '../../src/webhooks/deliveries.js';
import { newSigningSecret, signatureFor, signedHeaders } from '../../src/webhooks/signing.js';

// The test vector of the Standard Webhooks specification (standard-webhooks/standard-webhooks, libraries' tests).
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  payload: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

describe('webhook signatures', () => {
  test('the official Standard Webhooks test vector', () => {
    assert.equal(signatureFor(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.payload), VECTOR.signature);
    assert.equal(new Webhook(VECTOR.secret).sign(VECTOR.id, new Date(VECTOR.timestamp * 1000), VECTOR.payload), VECTOR.signature);
  });

  test('headers verify with the standardwebhooks package; two secrets give two space-separated values', () => {
    const a = newSigningSecret();
    const b = newSigningSecret();
    assert.match(a, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(a.slice(6), 'base64').length, 32);
    const now = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ type: 'contact.updated', data: { contact: { id: 'ct_1', name: 'Zoë ✓' } } });
    const headers = signedHeaders([a, b], 'msg_abc', now, body);
    assert.equal(headers['webhook-id'], 'msg_abc');
    assert.equal(headers['webhook-timestamp'], String(now));
    assert.match(headers['webhook-signature'], /^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual(new Webhook(a).verify(body, headers), JSON.parse(body));
    assert.deepEqual(new Webhook(b).verify(body, headers), JSON.parse(body));
    assert.throws(() => new Webhook(newSigningSecret()).verify(body, headers), /No matching signature/);
    assert.throws(() => new Webhook(a).verify(body + ' ', headers), /No matching signature/);
    const stale = signedHeaders([a], 'msg_abc', now - 600, body);
    assert.throws(() => new Webhook(a).verify(body, stale), /too old/);
  });

  test('retry delays follow the schedule with at most 10% jitter, and end after the ninth', () => {
    assert.deepEqual([...RETRY_SCHEDULE_MS], [5_000, 60_000, 300_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000, 32_400_000]);
    for (let attempt = 1; attempt <= 9; attempt++) {
      const base = RETRY_SCHEDULE_MS[attempt - 1];
      assert.equal(
        retryDelayMs(attempt, () => 0),
        base,
      );
      assert.equal(
        retryDelayMs(attempt, () => 0.999999),
        Math.round(base * (1 + RETRY_JITTER * 0.999999)),
      );
      for (let i = 0; i < 200; i++) {
        const d = retryDelayMs(attempt)!;
        assert.ok(d >= base && d <= base * 1.1, `attempt ${attempt}: ${d}`);
      }
    }
    assert.equal(retryDelayMs(10), undefined);
    const total = RETRY_SCHEDULE_MS.reduce((a, b) => a + b, 0);
    assert.ok(total > 24 * 3600_000 && total < 25 * 3600_000, 'about 24 hours in all');
  });
});
