// Counts the statements a component sends through its Kysely instance: `counted.db` is the same
// database with a plugin that notes each query's kind and table (transactions started from it too),
// and statements it runs as compiled SQL text (executeQuery) by their text.
import type { KyselyPlugin, OperationNode, RootOperationNode } from 'kysely';
import type { Db } from '../../src/db/schema.js';

export interface CountedQuery {
  kind: 'select' | 'insert' | 'update' | 'delete' | 'other';
  table: string | undefined;
}

function tableName(node: OperationNode | undefined): string | undefined {
  if (!node) return undefined;
  const n = node as { kind: string; node?: OperationNode; table?: { identifier?: { name?: string } } };
  if (n.kind === 'AliasNode') return tableName(n.node);
  if (n.kind === 'TableNode') return n.table?.identifier?.name;
  return undefined;
}

function describeQuery(node: RootOperationNode): CountedQuery {
  const n = node as unknown as { kind: string; from?: { froms: OperationNode[] }; table?: OperationNode; into?: OperationNode };
  switch (n.kind) {
    case 'SelectQueryNode':
      return { kind: 'select', table: tableName(n.from?.froms[0]) };
    case 'UpdateQueryNode':
      return { kind: 'update', table: tableName(n.table) };
    case 'DeleteQueryNode':
      return { kind: 'delete', table: tableName(n.from?.froms[0]) };
    case 'InsertQueryNode':
      return { kind: 'insert', table: tableName(n.into) };
    default:
      return { kind: 'other', table: undefined };
  }
}

/** A statement given as SQL text (src/db/bulk.ts runText): its first write, else the table it reads. */
function describeText(text: string): CountedQuery {
  const write = /\b(update|delete\s+from|insert\s+into)\s+"?(\w+)/i.exec(text);
  if (write) {
    const verb = write[1].toLowerCase();
    return { kind: verb.startsWith('update') ? 'update' : verb.startsWith('delete') ? 'delete' : 'insert', table: write[2] };
  }
  const read = /\bfrom\s+"?(\w+)/i.exec(text);
  return read ? { kind: 'select', table: read[1] } : { kind: 'other', table: undefined };
}

export function countQueries(db: Db): { db: Db; queries: CountedQuery[]; count(kind: CountedQuery['kind'], table: string): number } {
  const queries: CountedQuery[] = [];
  const plugin: KyselyPlugin = {
    transformQuery: ({ node }) => {
      queries.push(describeQuery(node));
      return node;
    },
    transformResult: async ({ result }) => result,
  };
  const counted = db.withPlugin(plugin);
  // Statements run as compiled text pass no plugin: they are noted by their text.
  const execute = counted.executeQuery.bind(counted);
  counted.executeQuery = ((query: Parameters<typeof execute>[0], queryId?: Parameters<typeof execute>[1]) => {
    if ('sql' in query && query.query.kind === 'RawNode') queries.push(describeText(query.sql));
    return execute(query, queryId);
  }) as typeof counted.executeQuery;
  return {
    db: counted,
    queries,
    count: (kind, table) => queries.filter((q) => q.kind === kind && q.table === table).length,
  };
}
