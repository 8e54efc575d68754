// Concurrent writers can race on a unique key (two mails from a new sender at once on Postgres).
// The loser's transaction is rolled back and run again, where it finds the winner's row.

export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

export async function retryOnUniqueViolation<T>(work: () => Promise<T>, tries = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= tries || !isUniqueViolation(error)) throw error;
    }
  }
}
