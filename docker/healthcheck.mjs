// The image's HEALTHCHECK: healthy when GET /readyz on the server's own listener answers 200 (the
// database answers). The port follows SVC_HTTP_ADDR; a wildcard address is asked on loopback.
import http from 'node:http';

const addr = process.env.SVC_HTTP_ADDR?.trim() || '0.0.0.0:8080';
const colon = addr.lastIndexOf(':');
let host = addr.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
if (host === '' || host === '0.0.0.0') host = '127.0.0.1';
if (host === '::') host = '::1';

const fail = (why) => {
  process.stderr.write(`unhealthy: ${why}\n`);
  process.exit(1);
};
http
  .get({ host, port: Number(addr.slice(colon + 1)), path: '/readyz', timeout: 4000 }, (res) => {
    res.resume();
    if (res.statusCode === 200) process.exit(0);
    fail(`/readyz answered ${res.statusCode}`);
  })
  .on('timeout', () => fail('/readyz did not answer within 4 s'))
  .on('error', (error) => fail(error.message));
