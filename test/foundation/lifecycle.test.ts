import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { runSvc, spawnServer, type TestEnv, testEnv } from '../helpers/server.js';

describe('shutdown', () => {
  let te: TestEnv;
  let key: string;
  before(async () => {
    te = await testEnv();
    await runSvc(['migrate', 'up'], { env: te.env });
    await runSvc(['bootstrap', '--email', 'o@example.com', '--workspace', 'W'], { env: te.env });
    key = (await runSvc(['api-key', 'create', '--workspace', 'W', '--name', 'k'], { env: te.env })).stdout.trim();
  });
  after(() => te.cleanup());

  test('SIGTERM stops accepting, lets an in-flight request finish, then exits 0', async () => {
    const server = await spawnServer(te.env);
    const url = new URL(server.url);
    const body = JSON.stringify({ name: 'In flight' });
    // A request whose body arrives in two parts, with SIGTERM in between.
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          method: 'POST',
          path: '/v1/contacts',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode!, text }));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 5));
      setTimeout(() => {
        server.child.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(5)), 300);
      }, 200);
    });
    const r = await answer;
    assert.equal(r.status, 201, r.text);
    assert.equal(JSON.parse(r.text).name, 'In flight');
    assert.equal(await server.exited, 0);
    assert.ok(server.stderrLines.some((l) => l.includes('"msg":"stopped"')));
    await assert.rejects(fetch(`${server.url}/healthz`));
  });

  test('SIGINT exits 0 too', async () => {
    const server = await spawnServer(te.env);
    assert.equal(await server.kill('SIGINT'), 0);
  });
});
