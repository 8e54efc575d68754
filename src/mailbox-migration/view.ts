// A migration as the API shows it: its row, copy progress and switching state.
import type { Ctx } from '../context.js';
import { formatMigration } from './format.js';
import { removalCount } from './removal.js';
import { loadProgress, type MigrationRow } from './store.js';
import { keepReadingView } from './switching/handover.js';
import { switchingView } from './switching/service.js';

export async function view(ctx: Pick<Ctx, 'db' | 'config'>, m: MigrationRow) {
  return {
    ...formatMigration(m, await loadProgress(ctx.db, m.id)),
    ...(await switchingView(ctx, m, (r) => removalCount(ctx.db, r))),
    keep_reading: await keepReadingView(ctx.db, m),
  };
}
