// A StrykerJS reporter that writes every mutant's result as it is known (reports/mutation/live.txt),
// so that a long run can be read, and acted on, before it ends.
import fs from 'node:fs';
import path from 'node:path';
import { declareClassPlugin, PluginKind } from '@stryker-mutator/api/plugin';

const FILE = path.resolve(process.env.SVC_MUTATION_LIVE ?? 'reports/mutation/live.txt');

class LiveReporter {
  constructor() {
    fs.mkdirSync(path.dirname(FILE), { recursive: true });
    fs.writeFileSync(FILE, '');
  }

  onMutantTested(result) {
    if (result.status === 'Ignored') return;
    const where = `${path.relative(process.cwd(), result.fileName)}:${result.location.start.line}:${result.location.start.column + 1}`;
    fs.appendFileSync(FILE, `${result.status} ${where} ${result.mutatorName} ${JSON.stringify(result.replacement ?? '')}\n`);
  }
}

export const strykerPlugins = [declareClassPlugin(PluginKind.Reporter, 'live', LiveReporter)];
