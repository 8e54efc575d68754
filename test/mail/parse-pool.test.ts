import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ParsePool, parseJobMessage } from '../../src/mail/parse-pool.js';
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

  test('attachment contents are moved from the worker, each in a buffer of its own size', async () => {
    const pool = new ParsePool(createLogger({ write: () => {} }), { size: 1 });
    try {
      const large = Buffer.alloc(50_000, 7);
      const raw = rawMail(
        { Subject: 'Moved', 'MIME-Version': '1.0', 'Content-Type': 'multipart/mixed; boundary="P"' },
        '--P\r\nContent-Type: text/plain\r\n\r\nhello\r\n' +
          '--P\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename="small.pdf"\r\n\r\n%PDF-1\r\n' +
          '--P\r\nContent-Type: text/plain\r\nContent-Disposition: attachment; filename="note.txt"\r\n\r\nsecond small\r\n' +
          `--P\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="large.bin"\r\nContent-Transfer-Encoding: base64\r\n\r\n${large.toString('base64').replace(/(.{76})/g, '$1\r\n')}\r\n--P--\r\n`,
      );
      // Twice: the worker's own buffers (its small-buffer pool) still work after a transfer.
      for (let round = 0; round < 2; round++) {
        const mail = await pool.parse(raw);
        const [small, note, big] = mail.attachments;
        assert.equal(small.content.toString(), '%PDF-1');
        assert.equal(note.content.toString(), 'second small');
        assert.ok(big.content.equals(large));
        // Cloned, a small attachment brought the worker's whole 8 KiB pool slab along with it.
        for (const a of mail.attachments) assert.equal(a.content.buffer.byteLength, a.content.byteLength, a.filename);
      }
    } finally {
      await pool.close();
    }
  });

  test('a raw source goes to the worker moved, in a buffer of its own size, and the caller keeps its own', async () => {
    // A small Buffer is a slice of Node's shared 8 KiB pool slab (as imapflow's literals are).
    const raw = Buffer.concat([Buffer.from(rawMail({ Subject: 'Slab' }, 'first part ')), Buffer.from('second part')]);
    assert.ok(raw.buffer.byteLength > raw.byteLength, 'the test needs a pooled slice');
    const { message, transfer } = parseJobMessage(7, raw);
    assert.equal(message.id, 7);
    assert.equal(message.raw.buffer.byteLength, raw.byteLength);
    assert.deepEqual(transfer, [message.raw.buffer]);
    assert.ok(Buffer.from(message.raw).equals(raw));
    const pool = new ParsePool(createLogger({ write: () => {} }), { size: 1 });
    try {
      const before = Buffer.from(raw);
      const mail = await pool.parse(raw);
      assert.equal(mail.subject, 'Slab');
      assert.match(mail.text, /first part second part/);
      // Moving the copy leaves the caller's Buffer (and the slab it shares) readable and unchanged.
      assert.ok(raw.equals(before));
      assert.equal(Buffer.from('after').toString(), 'after');
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
