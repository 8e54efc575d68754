// ApiResponse (src/http/response.ts): the headers every answer carries join the answer's own when
// its head is written; a name the answer sets itself, in any case and by any of node's ways, keeps
// the answer's value, and no header is sent twice. The write `end()` makes waits for the end of the
// turn of the event loop (answers of one turn go to the kernel together). A real node server over a
// real socket.
import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { API_SERVER_OPTIONS, ApiResponse, type CommonHeader } from '../../src/http/response.js';

const FIXED: CommonHeader[] = [
  ['x-content-type-options', 'nosniff'],
  ['cache-control', 'no-store'],
];

/** How each path answers; every one but /plain carries the request id and FIXED. */
const answers: Record<string, (res: ApiResponse) => void> = {
  '/object': (res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}'),
  '/own-value': (res) => res.writeHead(200, { 'Cache-Control': 'max-age=60', 'X-Request-Id': 'own' }).end(),
  '/reason': (res) => res.writeHead(201, 'Made', { 'content-type': 'text/plain' }).end('made'),
  '/set-before': (res) => {
    res.setHeader('Cache-Control', 'public');
    res.writeHead(200, { 'content-type': 'text/plain' }).end('x');
  },
  '/implicit': (res) => res.end('implicit'),
  '/raw': (res) => res.writeHead(200, ['Cache-Control', 'private', 'Content-Type', 'text/plain']).end('raw'),
  '/plain': (res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('plain'),
  '/held': (res) => {
    res.write('streamed ');
    // The head and the first chunk go out when node uncorks them (next tick); the end waits for the turn's end.
    process.nextTick(() => {
      const socket = res.socket!;
      heldWrite.beforeEnd = socket.writableLength;
      res.end('end');
      heldWrite.inTurn = socket.writableLength;
      setImmediate(() => (heldWrite.afterTurn = socket.writableLength));
    });
  },
};
const heldWrite: { beforeEnd?: number; inTurn?: number; afterTurn?: number } = {};

describe('ApiResponse', () => {
  let server: http.Server;
  let url: string;
  before(async () => {
    server = http.createServer(API_SERVER_OPTIONS, (req, res) => {
      assert.ok(res instanceof ApiResponse);
      if (req.url !== '/plain') res.carry('req-1', FIXED);
      answers[req.url!](res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  /** The answer's header lines as node's client got them (names lower case, repeated names kept apart). */
  function get(path: string): Promise<{ status: number; lines: [string, string][]; body: string }> {
    return new Promise((resolve, reject) => {
      http
        .get(`${url}${path}`, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d) => (body += d));
          res.on('end', () => {
            const lines: [string, string][] = [];
            for (let i = 0; i < res.rawHeaders.length; i += 2) lines.push([res.rawHeaders[i].toLowerCase(), res.rawHeaders[i + 1]]);
            resolve({ status: res.statusCode!, lines, body });
          });
        })
        .on('error', reject);
    });
  }

  const values = (lines: [string, string][], name: string) => lines.filter(([n]) => n === name).map(([, v]) => v);

  test('the common headers join the answer’s own', async () => {
    const { status, lines, body } = await get('/object');
    assert.equal(status, 200);
    assert.equal(body, '{}');
    assert.deepEqual(values(lines, 'x-request-id'), ['req-1']);
    assert.deepEqual(values(lines, 'x-content-type-options'), ['nosniff']);
    assert.deepEqual(values(lines, 'cache-control'), ['no-store']);
    assert.deepEqual(values(lines, 'content-type'), ['application/json']);
  });

  test('a name the answer sets itself keeps its value, once, whatever its case or way', async () => {
    for (const [path, expected] of [
      ['/own-value', 'max-age=60'],
      ['/set-before', 'public'],
      ['/raw', 'private'],
    ] as const) {
      const { lines } = await get(path);
      assert.deepEqual(values(lines, 'cache-control'), [expected], path);
      assert.deepEqual(values(lines, 'x-content-type-options'), ['nosniff'], path);
    }
    assert.deepEqual(values((await get('/own-value')).lines, 'x-request-id'), ['own']);
  });

  test('with a status message, and when the head is written implicitly', async () => {
    const made = await get('/reason');
    assert.equal(made.status, 201);
    assert.deepEqual(values(made.lines, 'x-request-id'), ['req-1']);
    assert.deepEqual(values(made.lines, 'content-type'), ['text/plain']);
    const implicit = await get('/implicit');
    assert.equal(implicit.body, 'implicit');
    assert.deepEqual(values(implicit.lines, 'x-request-id'), ['req-1']);
    assert.deepEqual(values(implicit.lines, 'cache-control'), ['no-store']);
  });

  test('an answer that carries nothing writes only its own headers', async () => {
    const { lines } = await get('/plain');
    assert.deepEqual(values(lines, 'x-request-id'), []);
    assert.deepEqual(values(lines, 'cache-control'), []);
  });

  test('the write end() makes is handed to the kernel at the end of the turn, whole', async () => {
    const { body, lines } = await get('/held');
    assert.equal(body, 'streamed end');
    assert.deepEqual(values(lines, 'x-request-id'), ['req-1']);
    assert.equal(heldWrite.beforeEnd, 0, 'a write before the end goes at once');
    assert.ok(heldWrite.inTurn! > 0, 'the end is still held when end() returns');
    assert.equal(heldWrite.afterTurn, 0, 'and written once the turn ends');
  });

  test('many answers ended in the same turns arrive whole, in order per connection', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
    try {
      const bodies = await Promise.all(
        Array.from(
          { length: 40 },
          (_, i) =>
            new Promise<string>((resolve, reject) => {
              http
                .get(`${url}/${i % 2 ? 'object' : 'implicit'}`, { agent }, (res) => {
                  let body = '';
                  res.setEncoding('utf8');
                  res.on('data', (d) => (body += d));
                  res.on('end', () => resolve(body));
                })
                .on('error', reject);
            }),
        ),
      );
      assert.deepEqual(
        bodies,
        Array.from({ length: 40 }, (_, i) => (i % 2 ? '{}' : 'implicit')),
      );
    } finally {
      agent.destroy();
    }
  });

  test('a socket node destroys in the same turn (bytes after a Connection: close request) still sends the answer first', async () => {
    const { port } = server.address() as AddressInfo;
    const text = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write('GET /object HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGARBAGE\r\n'));
      let got = '';
      socket.setEncoding('utf8');
      socket.on('data', (d) => (got += d));
      socket.on('close', () => resolve(got));
      socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? undefined : reject(error)));
    });
    assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(text, /\r\nx-request-id: req-1\r\n/);
    assert.match(text, /\r\n\r\n2\r\n\{\}\r\n0\r\n\r\n$/);
  });
});
