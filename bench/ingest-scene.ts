// What bench/ingest and bench/ingest-pages share: the bench's mail and a `svc serve` with the SMTP
// ingress on, one workspace, inbox and e-mail channel (support@bench.example).
import { randomBytes } from 'node:crypto';
import { type ChildServer, runSvc, spawnServer, type TestEnv, testEnv } from '../test/helpers/server.js';
import { benchServerEnv } from './lib.js';

export const BENCH_ADDRESS = 'support@bench.example';

/** The bench's mail number `i`: ~5 KB of text and a small attachment, from one of 250 customers. */
export function benchMail(i: number, to = BENCH_ADDRESS): { raw: Buffer; envelope: { from: string; to: string[] } } {
  const sender = `customer${i % 250}@bench.example`;
  const text = `Hello,\r\n\r\n${'I have a question about my order and the delivery date. '.repeat(60)}\r\n\r\nThanks, customer ${i}\r\n`;
  const attachment = randomBytes(600).toString('base64').replace(/.{76}/g, '$&\r\n');
  const raw = [
    `From: Customer ${i % 250} <${sender}>`,
    `To: ${to}`,
    `Subject: Order question ${i}`,
    `Message-ID: <bench-${i}-${randomBytes(6).toString('hex')}@bench.example>`,
    `Date: ${new Date().toUTCString()}`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="bench-boundary"',
    '',
    '--bench-boundary',
    'Content-Type: text/plain; charset=utf-8',
    '',
    text,
    '--bench-boundary',
    'Content-Type: application/octet-stream',
    'Content-Disposition: attachment; filename="receipt.bin"',
    'Content-Transfer-Encoding: base64',
    '',
    attachment,
    '--bench-boundary--',
    '',
  ].join('\r\n');
  return { raw: Buffer.from(raw), envelope: { from: sender, to: [to] } };
}

export interface IngestServer {
  te: TestEnv;
  server: ChildServer;
  /** The SMTP ingress port. */
  port: number;
  stop(): Promise<void>;
}

/** A migrated data dir with the bench's channel, and `svc serve` on it (its stderr drained, not kept). */
export async function startIngestServer(nodeArgs: string[] = []): Promise<IngestServer> {
  const te = await testEnv({ SVC_INGRESS_SECRET: 'bench-secret', SVC_METRICS_ADDR: 'off' });
  const env = te.env;
  const svc = async (args: string[]) => {
    const result = await runSvc(args, { env });
    if (result.code !== 0) throw new Error(result.stderr);
    return result.stdout.trim();
  };
  try {
    await svc(['migrate', 'up']);
    await svc(['bootstrap', '--email', 'owner@bench.example', '--workspace', 'Bench']);
    const inbox = await svc(['inbox', 'create', '--workspace', 'Bench', '--name', 'Support']);
    await svc(['channel', 'create-email', '--workspace', 'Bench', '--inbox', inbox, '--name', 'Mail', '--address', BENCH_ADDRESS]);
    const server = await spawnServer({ ...env, ...benchServerEnv() }, ['serve'], nodeArgs);
    const listening = JSON.parse(server.stderrLines.find((l) => l.includes('"msg":"listening"'))!) as { smtp: string };
    // The server writes a log line per mail; only the latest lines are kept so the pipe never backs up.
    server.stderrLines.length = 0;
    server.child.stderr!.on('data', () => {
      if (server.stderrLines.length > 1000) server.stderrLines.splice(0, server.stderrLines.length - 100);
    });
    return {
      te,
      server,
      port: Number(listening.smtp.slice(listening.smtp.lastIndexOf(':') + 1)),
      async stop() {
        await server.kill('SIGTERM');
        await te.cleanup();
      },
    };
  } catch (error) {
    await te.cleanup();
    throw error;
  }
}
