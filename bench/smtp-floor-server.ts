// The floor of bench/ingest: a bare smtp-server that accepts every recipient and only consumes
// the message stream. Run as a child process; prints its port on stdout.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  disableReverseLookup: true,
  logger: false,
  size: 30 * 1024 * 1024,
  onData(stream, _session, callback) {
    stream.on('data', () => {});
    stream.on('end', () => callback(null, 'OK'));
  },
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
