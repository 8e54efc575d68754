// The bench's webhook receiver, run as its own process so that it does not share the server's CPU
// time: answers 204 to every POST, counts them, and verifies a sample of signatures with the
// standardwebhooks package. Prints its port on the first line of stdout.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

const verifiers = new Map<string, Webhook>();
let count = 0;
let verified = 0;
let failed = 0;

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (req.method === 'PUT' && req.url === '/secrets') {
      for (const [path, secret] of Object.entries(JSON.parse(Buffer.concat(chunks).toString()) as Record<string, string>))
        verifiers.set(path, new Webhook(secret));
      res.writeHead(204).end();
      return;
    }
    if (req.method === 'GET' && req.url === '/stats') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ count, verified, failed }));
      return;
    }
    count++;
    const wh = verifiers.get(req.url ?? '');
    if (wh && count % 50 === 0) {
      try {
        wh.verify(Buffer.concat(chunks).toString(), req.headers as Record<string, string>);
        verified++;
      } catch {
        failed++;
      }
    }
    res.writeHead(204).end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => process.exit(0));
