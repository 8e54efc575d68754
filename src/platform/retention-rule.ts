// The common retention rule: delete, a batch at a time, the rows of one table whose date columns
// are older than a kept period.
import { sql } from 'kysely';
import type { Database } from '../db/schema.js';
import { iso } from './clock.js';
import type { RetentionRule } from './lifecycle.js';

type Column<T extends keyof Database> = keyof Database[T] & string;

export interface OlderThanRule<T extends keyof Database & string> {
  /** The count's name in the retention log line. */
  name: string;
  table: T;
  /** The primary key column (a batch is chosen by it). */
  key: Column<T>;
  /** A row is due when any of these is before now minus keptMs (a null column never makes it due). */
  columns: Column<T>[];
  keptMs: number;
  /** Due at the cut-off instant itself too (for expiry columns: a row expiring now is already dead). */
  inclusive?: boolean;
}

export function olderThanRule<T extends keyof Database & string>(rule: OlderThanRule<T>): RetentionRule {
  return {
    name: rule.name,
    shortBatchIsLast: true,
    async deleteBatch(ctx, now, batch) {
      const before = iso(now.getTime() - rule.keptMs);
      const op = sql.raw(rule.inclusive ? '<=' : '<');
      const due = sql.join(
        rule.columns.map((c) => sql`${sql.ref(c)} ${op} ${before}`),
        sql` or `,
      );
      const table = sql.table(rule.table);
      const key = sql.ref(rule.key);
      const r = await sql`delete from ${table} where ${key} in (select ${key} from ${table} where ${due} limit cast(${batch} as integer))`.execute(ctx.db);
      return Number(r.numAffectedRows ?? 0);
    },
  };
}
