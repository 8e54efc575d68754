// What the API shows of a contacts import (the stored file's key stays inside).
import { z } from '@hono/zod-openapi';
import type { ColumnMapping } from './import-rows.js';
import type { ImportRow, RowErrorEntry } from './imports.js';

export function formatImport(row: ImportRow, extra: { sample?: string[][]; suggested?: ColumnMapping[] } = {}) {
  return {
    id: row.id,
    state: row.state,
    filename: row.filename,
    encoding: row.encoding,
    delimiter: row.delimiter,
    bytes: row.bytes,
    columns: JSON.parse(row.columns) as string[],
    sample: extra.sample ?? null,
    suggested_mapping: extra.suggested ?? null,
    mapping: row.mapping ? (JSON.parse(row.mapping) as ColumnMapping[]) : null,
    rows_total: row.rows_total,
    rows_done: row.rows_done,
    percent: row.rows_total ? Math.floor((row.rows_done * 100) / row.rows_total) : 100,
    created: row.created_count,
    updated: row.updated_count,
    unchanged: row.unchanged_count,
    error_count: row.error_count,
    errors: JSON.parse(row.errors) as RowErrorEntry[],
    failure: row.failure,
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
  };
}

export const ColumnMappingOut = z
  .object({
    to: z.enum(['name', 'email', 'external_id', 'attribute', 'ignore']),
    inbox_id: z.string().optional(),
    key: z.string().optional(),
  })
  .openapi('ContactImportColumn');

export const ContactImportSchema = z
  .object({
    id: z.string(),
    state: z.enum(['uploaded', 'queued', 'running', 'done', 'failed']).openapi({
      description: 'uploaded: waiting for a mapping (POST …/start); queued and running: the job works through the rows; done; failed (see failure)',
    }),
    filename: z.string().nullable(),
    encoding: z.enum(['utf-8', 'utf-8-bom', 'utf-16le', 'utf-16be']).openapi({ description: 'how the file was read' }),
    delimiter: z.string().openapi({ description: 'the cell separator found in the header: comma, semicolon or tab' }),
    bytes: z.number().int(),
    columns: z.array(z.string()).openapi({ description: 'the header row (the first row names the columns)' }),
    sample: z
      .array(z.array(z.string()))
      .nullable()
      .openapi({ description: 'the first rows after the header, as read (while the import waits for its mapping)' }),
    suggested_mapping: z.array(ColumnMappingOut).nullable().openapi({ description: 'a mapping guessed from the header (while uploaded)' }),
    mapping: z.array(ColumnMappingOut).nullable(),
    rows_total: z.number().int().openapi({ description: 'rows after the header' }),
    rows_done: z.number().int(),
    percent: z.number().int(),
    created: z.number().int(),
    updated: z.number().int(),
    unchanged: z.number().int().openapi({ description: 'rows that matched a contact and changed nothing' }),
    error_count: z.number().int(),
    errors: z
      .array(z.object({ row: z.number().int().openapi({ description: 'the row number as a spreadsheet shows it (the header is row 1)' }), reason: z.string() }))
      .openapi({ description: 'rows that were not applied (the first 1,000)' }),
    failure: z.string().nullable(),
    created_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
  })
  .openapi('ContactImport');
