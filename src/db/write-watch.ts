// Observes, process-wide, the UPDATEs and DELETEs that any Kysely instance of this process sends
// to chosen tables, so that in-process caches (the PAT resolver's) can drop what a write may have
// changed the moment it happens — whichever module, request or CLI command made it. A Kysely
// plugin sees every query's syntax tree, so no writer has to remember to call an invalidation hook.
// Writes made by other processes are not seen here: see externalChanges in connection.ts (SQLite's
// data_version; on PostgreSQL the writer also publishes the write, db/write-feed.ts).
import type {
  KyselyPlugin,
  OperationNode,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';

/** Called with the table name and the updated column names (null for a DELETE or raw SQL). */
export type WriteListener = (table: string, columns: readonly string[] | null) => void;

const listeners = new Set<WriteListener>();

/** Subscribes to writes on any table; returns the unsubscribe function. */
export function onTableWrite(listener: WriteListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function tableName(node: OperationNode | undefined): string | null {
  if (!node) return null;
  if (node.kind === 'AliasNode') return tableName((node as unknown as { node: OperationNode }).node);
  if (node.kind === 'TableNode')
    return (node as unknown as { table: { identifier: { name: string } } }).table.identifier.name;
  return null;
}

function columnName(node: OperationNode): string {
  const column = node as unknown as { column?: { name?: string } };
  return column.column?.name ?? '?';
}

const RAW_WRITE =
  /^\s*(update|delete|insert\s+or\s+replace)\b[^;]*?\b(?:from\s+|update\s+|into\s+)?"?([a-z_][a-z0-9_]*)"?/i;
/** The statement's first words are in its first fragment (SQL never starts with a parameter). */
const RAW_WRITE_START = /^\s*(update|delete|insert\s+or\s+replace)\b/i;

/** Tells the listeners; returns what was written (null when the query writes nothing). */
function notify(node: RootOperationNode): { table: string; columns: readonly string[] | null } | null {
  let table: string | null = null;
  let columns: readonly string[] | null = null;
  if (node.kind === 'UpdateQueryNode') {
    table = tableName(node.table);
    columns = (node.updates ?? []).map((update) => columnName(update.column));
  } else if (node.kind === 'DeleteQueryNode') {
    table = tableName(node.from.froms[0]);
  } else if (node.kind === 'RawNode') {
    // Raw SQL (sql`…`) that writes: report the first table it names; no column list. Most raw
    // statements are reads and inserts: told apart by their first fragment, without joining them.
    if (!RAW_WRITE_START.test(node.sqlFragments[0] ?? '')) return null;
    const match = RAW_WRITE.exec(node.sqlFragments.join('?'));
    if (match) table = match[2];
  } else {
    return null;
  }
  if (table === null) return null;
  for (const listener of listeners) listener(table, columns);
  return { table, columns };
}

/**
 * Reports each write twice: when the query is compiled (before it runs) and when its result comes
 * back (after it ran), so that a cache fill racing the write cannot keep the value from before it.
 */
export class WriteWatchPlugin implements KyselyPlugin {
  readonly #pending = new WeakMap<object, RootOperationNode>();
  /** Called (and awaited, before the query's promise resolves) after each write. */
  readonly #afterWrite: ((table: string, columns: readonly string[] | null) => Promise<void> | void) | null;

  constructor(afterWrite: ((table: string, columns: readonly string[] | null) => Promise<void> | void) | null = null) {
    this.#afterWrite = afterWrite;
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const { node } = args;
    if (node.kind === 'UpdateQueryNode' || node.kind === 'DeleteQueryNode' || node.kind === 'RawNode') {
      notify(node);
      this.#pending.set(args.queryId, node);
    }
    return node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const node = this.#pending.get(args.queryId);
    if (node) {
      this.#pending.delete(args.queryId);
      const written = notify(node);
      if (written && this.#afterWrite) await this.#afterWrite(written.table, written.columns);
    }
    return args.result;
  }
}
