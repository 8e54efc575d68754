// `npm run mutation`: StrykerJS over the files in stryker.config.json. Stryker's command line refuses
// Node 20 (its package asks for Node 22, and the package entry loads the command line, which checks
// the version as it loads), while the project's machines run Node 20. The Stryker class itself runs
// on Node 20, so it is loaded from its own module, with the same configuration file.
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const entry = createRequire(import.meta.url).resolve('@stryker-mutator/core');
const { Stryker } = await import(pathToFileURL(path.join(path.dirname(entry), 'stryker.js')).href);

const results = await new Stryker({
  configFile: process.env.SVC_MUTATION_CONFIG ?? 'stryker.config.json',
  ...(process.argv.includes('--dryRunOnly') ? { dryRunOnly: true } : {}),
}).runMutationTest();
const detected = results.filter((r) => r.status === 'Killed' || r.status === 'Timeout').length;
const valid = results.filter((r) => r.status !== 'CompileError' && r.status !== 'RuntimeError' && r.status !== 'Ignored').length;
console.log(`mutation score: ${valid ? ((100 * detected) / valid).toFixed(2) : 'n/a'} % (${detected} of ${valid} mutants detected)`);
