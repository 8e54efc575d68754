// A stored mail's digest is its identity in mail_digests: the same mail read again (a later import,
// the same mail arriving by SMTP) must hash to what was stored, whatever the code that hashes it.
// The expected values were made by the first implementation (a Hash object, one update per part).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mailDigest, mailDigests } from '../../src/mail/digest.js';

const mail = {
  messageId: '<a@b.test>',
  date: new Date(Date.UTC(2024, 0, 2, 3, 4, 5)),
  from: ' Customer@Example.test ',
  to: ['b@c.test', 'A@c.test', 'b@c.test'],
  subject: ' Hello  there ',
  body: ['Grüße \ud83d\ude00\nline', '', 'abc123'],
};

test('digests stay what mail was stored under', () => {
  assert.deepEqual(mailDigests(mail), {
    digest: 'afc9837e7046d46ca56055d67bb7e25d7674746e132558ced7a0527fa6a72da0',
    priorDigest: 'ef382cc5bb6aeb29e374e0a8b2ad37ab50b435899f4ffffa2eee56128d0638f1',
  });
  assert.equal(mailDigest(mail), 'ef382cc5bb6aeb29e374e0a8b2ad37ab50b435899f4ffffa2eee56128d0638f1');
  const unreadable = { messageId: null, date: null, from: null, to: [], subject: null, body: ['raw', 'ff'] };
  assert.deepEqual(mailDigests(unreadable), { digest: '2a4c1aef82efa60b5cf493df940c8bb10e5bd3886ae0a58ba76a2326edec9cea', priorDigest: null });
  // Lone surrogates at a part's edges: each part is hashed as its own UTF-8, never paired with the next.
  const lone = { messageId: 'x', date: null, from: 'a', to: [], subject: 's', body: ['lone \ud800', '\udc00 low'] };
  assert.equal(mailDigest(lone), '2e67a3cd3be235797bf62405b5aa5262ad15fbaf12f29bd16354686c244e4e4c');
});
