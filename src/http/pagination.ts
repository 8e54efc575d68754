// Lists: ?limit= (default 50, max 200) and ?cursor= (opaque); answer {"data":[…],"next_cursor":…|null}.
// The schemas routes declare; the cursor and page helpers services use are in src/platform/pagination.ts.
import { z } from '@hono/zod-openapi';

export const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).optional().openapi({ description: 'page size, 1 to 200 (default 50)' }),
  cursor: z.string().max(500).optional().openapi({ description: 'next_cursor of the previous page' }),
});

export const pageSchema = <T extends z.ZodTypeAny>(item: T) => z.object({ data: z.array(item), next_cursor: z.string().nullable() });
