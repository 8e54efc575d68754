import type { Kysely } from 'kysely';
import { notNull } from '../src/db/dialect.js';

// Web analytics tied to conversations (issue 39): the visit a widget conversation came from, copied
// when the conversation starts (raw visits are deleted after SVC_ANALYTICS_RAW_DAYS; this stays as
// long as the conversation). Holds no address and no visitor hash.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('analytics_conversation_visits')
    .addColumn('conversation_id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('property_id', 'text', notNull)
    .addColumn('visit_id', 'text', notNull)
    .addColumn('started_at', 'text', notNull)
    .addColumn('entry_path', 'text', notNull)
    .addColumn('referrer', 'text')
    .addColumn('source', 'text')
    .addColumn('utm_source', 'text')
    .addColumn('utm_medium', 'text')
    .addColumn('utm_campaign', 'text')
    .addColumn('country', 'text')
    .addColumn('region', 'text')
    .addColumn('city', 'text')
    .addColumn('browser', 'text')
    .addColumn('os', 'text')
    .addColumn('device', 'text')
    // JSON array of {path, at}: the pageviews of that visitor that day, up to the conversation.
    .addColumn('pages', 'text', notNull)
    .addColumn('attached_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('analytics_conversation_visits_property').on('analytics_conversation_visits').columns(['property_id', 'started_at']).execute();
  await db.schema.createIndex('analytics_conversation_visits_workspace').on('analytics_conversation_visits').column('workspace_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('analytics_conversation_visits').execute();
}
