// Table types of contact imports (CSV) and segments. Contacts themselves, their addresses and
// external ids are in ./conversations.ts.

export type ContactImportState = 'uploaded' | 'queued' | 'running' | 'done' | 'failed';
/** How the file's bytes were read: UTF-8 (with or without a byte-order mark) or UTF-16 with one. */
export type ContactImportEncoding = 'utf-8' | 'utf-8-bom' | 'utf-16le' | 'utf-16be';

export interface ContactImportsTable {
  id: string;
  workspace_id: string;
  created_by: string | null;
  state: ContactImportState;
  /** The uploaded file in storage; null once the import ended (the file is removed). */
  file_key: string | null;
  filename: string | null;
  encoding: ContactImportEncoding;
  bytes: number;
  /** JSON array of the header's cells (the first row names the columns). */
  columns: string;
  /** The cell separator found in the header: , ; or a tab. */
  delimiter: string;
  /** JSON array of the chosen mapping (one entry per column); null until started. */
  mapping: string | null;
  /** Data rows in the file (the header not counted). */
  rows_total: number;
  rows_done: number;
  created_count: number;
  updated_count: number;
  unchanged_count: number;
  error_count: number;
  /** JSON array of { row, reason } (the first 1,000). */
  errors: string;
  /** Why the whole import failed (state failed). */
  failure: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  updated_at: string;
}

export interface ContactSegmentsTable {
  id: string;
  workspace_id: string;
  name: string;
  /** JSON of the contact list's filters (src/contacts/list.ts ContactFilter). */
  filter: string;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface ContactTables {
  contact_imports: ContactImportsTable;
  contact_segments: ContactSegmentsTable;
}
