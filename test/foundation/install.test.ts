import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { postgresUrl } from '../helpers/db.js';
import { tempDir } from '../helpers/server.js';

// The install script does not depend on the database, so it runs in the SQLite pass only.
describe('install.sh', { skip: postgresUrl ? 'install.sh is exercised in the SQLite pass' : false }, () => {
  test('--help prints a usage text (not lines of the script); an unknown option points to it', () => {
    const help = spawnSync('bash', ['install.sh', '--help'], { encoding: 'utf8' });
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /^Usage: sudo \.\/install\.sh /);
    for (const option of ['--prefix DIR', '--no-systemd', '--user NAME', '--help']) assert.ok(help.stdout.includes(option), option);
    assert.ok(!/^#/m.test(help.stdout) && !help.stdout.includes('set -e') && !help.stdout.includes('PREFIX='), help.stdout);
    const bad = spawnSync('bash', ['install.sh', '--nope'], { encoding: 'utf8' });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /unknown option --nope \(see \.\/install\.sh --help\)/);
  });

  test('installs under a prefix, keeps data and key on re-run, and the unit passes systemd-analyze verify', { timeout: 600_000 }, () => {
    const prefix = tempDir('svc-install-');
    const user = os.userInfo().username;
    const run = () => spawnSync('bash', ['install.sh', '--prefix', prefix, '--user', user], { encoding: 'utf8' });
    const first = run();
    assert.equal(first.status, 0, first.stderr);
    const envFile = path.join(prefix, 'etc/svc/svc.env');
    assert.equal(fs.statSync(envFile).mode & 0o777, 0o600);
    const envText = fs.readFileSync(envFile, 'utf8');
    const key = /^SVC_MASTER_KEY=(.+)$/m.exec(envText)![1];
    assert.equal(Buffer.from(key, 'base64').length, 32);
    assert.ok(fs.existsSync(path.join(prefix, 'opt/svc/dist/src/main.js')));
    assert.ok(!fs.existsSync(path.join(prefix, 'opt/svc/node_modules/typescript')), 'dev dependencies are pruned');

    const svc = path.join(prefix, 'usr/local/bin/svc');
    const migrate = spawnSync(svc, ['migrate', 'up'], { encoding: 'utf8', env: { PATH: process.env.PATH } });
    assert.equal(migrate.status, 0, migrate.stderr);
    const boot = spawnSync(svc, ['bootstrap', '--email', 'o@example.com', '--workspace', 'Installed'], { encoding: 'utf8', env: { PATH: process.env.PATH } });
    assert.equal(boot.status, 0, boot.stderr);
    assert.ok(fs.existsSync(path.join(prefix, 'var/lib/svc/svc.db')));

    const unit = path.join(prefix, 'etc/systemd/system/svc.service');
    const unitText = fs.readFileSync(unit, 'utf8');
    for (const line of [
      'NoNewPrivileges=yes',
      'ProtectSystem=strict',
      `ReadWritePaths=${prefix}/var/lib/svc`,
      'PrivateTmp=yes',
      'AmbientCapabilities=CAP_NET_BIND_SERVICE',
    ]) {
      assert.ok(unitText.includes(line), line);
    }
    const analyze = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((p) => fs.existsSync(p));
    if (analyze) execFileSync(analyze, ['verify', unit], { stdio: 'pipe' });
    else if (process.env.CI) assert.fail('systemd-analyze is missing in CI');

    const second = run();
    assert.equal(second.status, 0, second.stderr);
    assert.match(second.stderr, /keeping/);
    assert.equal(fs.readFileSync(envFile, 'utf8'), envText);
    const list = spawnSync(svc, ['inbox', 'list', '--workspace', 'Installed'], { encoding: 'utf8', env: { PATH: process.env.PATH } });
    assert.equal(list.status, 0, list.stderr);
    fs.rmSync(prefix, { recursive: true, force: true });
  });

  test('the unit in the repository passes systemd-analyze verify', () => {
    const analyze = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((p) => fs.existsSync(p));
    if (!analyze) {
      if (process.env.CI) assert.fail('systemd-analyze is missing in CI');
      return;
    }
    const dir = tempDir();
    // ExecStart must name an executable that exists on this machine.
    const text = fs.readFileSync('systemd/svc.service', 'utf8').replace('ExecStart=/usr/bin/node', `ExecStart=${process.execPath}`);
    fs.writeFileSync(path.join(dir, 'svc.service'), text);
    execFileSync(analyze, ['verify', path.join(dir, 'svc.service')], { stdio: 'pipe' });
  });
});
