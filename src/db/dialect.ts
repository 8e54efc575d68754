// Column shapes shared by every migration so both dialects store the same thing:
// ids and times are text (ISO 8601 UTC), flags are integers 0/1, JSON is text.
import { type ColumnDefinitionBuilder, type CreateTableBuilder, type Kysely, PostgresAdapter } from 'kysely';

export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** An increasing integer key (event sequence numbers and the like). */
export function withSequenceKey<T extends string>(db: Kysely<any>, table: CreateTableBuilder<T, any>, column: string) {
  return isPostgres(db)
    ? table.addColumn(column, 'bigserial', (c) => c.primaryKey())
    : table.addColumn(column, 'integer', (c) => c.primaryKey().autoIncrement());
}

export const notNull = (c: ColumnDefinitionBuilder) => c.notNull();
