// bench/startup: cold start of `svc serve` on an empty data dir until /readyz answers 200, and the
// server's resident memory after it has been idle for 3 s. Goals: < 1 s and < 120 MB.

import { testEnv } from '../test/helpers/server.js';
import { figure, startBenchServer } from './lib.js';

const runs = 5;
const starts: number[] = [];
const rss: number[] = [];
for (let i = 0; i < runs; i++) {
  const te = await testEnv();
  const t0 = performance.now();
  const server = await startBenchServer(te.env);
  for (;;) {
    const ok = await fetch(`${server.url}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  starts.push(performance.now() - t0);
  await new Promise((r) => setTimeout(r, 3000));
  rss.push(server.rssMb());
  await server.stop();
  await te.cleanup();
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
figure('cold_start_to_ready_median', median(starts), 'ms');
figure('cold_start_to_ready_max', Math.max(...starts), 'ms');
figure('idle_rss_median', median(rss), 'MB');
