// Column helpers for migrations that run unchanged on SQLite and PostgreSQL.
import { PostgresAdapter, sql, type ColumnDefinitionBuilder, type CreateTableBuilder, type Kysely } from 'kysely';

/** `INTEGER PRIMARY KEY AUTOINCREMENT` on SQLite, an identity column on PostgreSQL. */
export function withSerialId<T extends string>(
  db: Kysely<unknown>,
  table: CreateTableBuilder<T>,
): CreateTableBuilder<T> {
  return isPostgres(db)
    ? table.addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

export function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

export const notNull = (c: ColumnDefinitionBuilder) => c.notNull();
export const flag = (fallback: 0 | 1) => (c: ColumnDefinitionBuilder) => c.notNull().defaultTo(fallback);
export { sql };
