import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ParsePool } from '../../src/mail/parse-pool.js';
import { createLogger } from '../../src/platform/log.js';
import { rawMail } from '../helpers/mail.js';

describe('mail parsing in worker threads', () => {
  test('parses like the main thread, attachments as Buffers', async () => {
    const lines: string[] = [];
    const pool = new ParsePool(createLogger({ write: (l) => lines.push(l) }), { size: 1 });
    try {
      const raw = rawMail(
        { Subject: 'Pool', 'MIME-Version': '1.0', 'Content-Type': 'multipart/mixed; boundary="P"' },
        '--P\r\nContent-Type: text/plain\r\n\r\nhello pool\r\n--P\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename="a.pdf"\r\n\r\n%PDF-1\r\n--P--\r\n',
      );
      const results = await Promise.all([pool.parse(raw), pool.parse(raw), pool.parse(raw)]);
      for (const mail of results) {
        assert.equal(mail.subject, 'Pool');
        assert.match(mail.text, /hello pool/);
        assert.ok(Buffer.isBuffer(mail.attachments[0].content));
        assert.equal(mail.attachments[0].content.toString(), '%PDF-1');
      }
    } finally {
      await pool.close();
    }
  });

  test('a parse that outlasts the time limit keeps the headers, and the pool goes on with a fresh worker', async () => {
    const lines: string[] = [];
    const pool = new ParsePool(createLogger({ write: (l) => lines.push(l) }), { size: 1, timeoutMs: 0 });
    try {
      const mail = await pool.parse(rawMail({ Subject: 'Too slow', From: 'Slow <slow@cust.example>' }));
      assert.equal(mail.subject, 'Too slow');
      assert.equal(mail.from.address, 'slow@cust.example');
      assert.match(mail.text, /could not be read/);
      assert.ok(lines.some((l) => l.includes('mail parse timed out')));
      const next = await pool.parse(rawMail({ Subject: 'Again' }));
      assert.equal(next.subject, 'Again');
    } finally {
      await pool.close();
    }
  });
});
