import nodemailer from 'nodemailer';
import { randomBytes } from 'node:crypto';
function message(i, to) {
  const text = `Hello,\r\n\r\n${'I have a question about my order and the delivery date. '.repeat(60)}\r\n`;
  const attachment = randomBytes(600).toString('base64').replace(/.{76}/g, '$&\r\n');
  return { raw: Buffer.from([`From: Customer ${i % 250} <customer${i%250}@bench.example>`, `To: ${to}`, `Subject: Order ${i}`, `Message-ID: <b-${i}-${randomBytes(6).toString('hex')}@bench.example>`, 'MIME-Version: 1.0', 'Content-Type: multipart/mixed; boundary="bb"', '', '--bb', 'Content-Type: text/plain; charset=utf-8', '', text, '--bb', 'Content-Type: application/octet-stream', 'Content-Disposition: attachment; filename="r.bin"', 'Content-Transfer-Encoding: base64', '', attachment, '--bb--', ''].join('\r\n')), envelope: { from: `customer${i%250}@bench.example`, to: [to] } };
}
const port = Number(process.argv[2]); const N = Number(process.argv[3] ?? 3000);
const t0 = performance.now();
const tr = nodemailer.createTransport({ host: '127.0.0.1', port, ignoreTLS: true, pool: true, maxConnections: Number(process.env.CONN ?? 5), maxMessages: Infinity });
await Promise.all(Array.from({ length: N }, (_, i) => tr.sendMail(message(i, 'support@bench.example'))));
tr.close();
console.log('msgs/s', (N / ((performance.now() - t0) / 1000)).toFixed(0));
