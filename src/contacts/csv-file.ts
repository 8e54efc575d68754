// Reading an uploaded contacts CSV: the bytes' encoding (UTF-8, with or without a byte-order mark,
// or UTF-16 with one), the cell separator, and its records through csv-parse (RFC 4180: quoted
// cells may hold separators, quotes and line breaks). A file that is not text, not UTF-8/UTF-16,
// empty or not CSV is refused with a 400 that says which (`reason`), before anything is stored.
import { Readable } from 'node:stream';
import type { parse as Parse } from 'csv-parse';
import type { ContactImportEncoding } from '../db/schema.js';
import { invalid } from '../platform/errors.js';

export const MAX_IMPORT_BYTES = 10 * 1024 * 1024;
export const MAX_COLUMNS = 200;
/** One record (a row, line breaks in cells included) may be at most this many characters. */
const MAX_RECORD_CHARS = 256 * 1024;

export type CsvProblem = 'empty' | 'binary' | 'encoding' | 'malformed' | 'too_many_columns';

function refuse(reason: CsvProblem, message: string) {
  return invalid(message, { reason });
}

/** The file's text and how it was read. */
export function decodeCsv(buf: Buffer, known?: ContactImportEncoding): { text: string; encoding: ContactImportEncoding } {
  const encoding = known ?? detectEncoding(buf);
  const body = encoding === 'utf-8-bom' ? buf.subarray(3) : encoding === 'utf-16le' || encoding === 'utf-16be' ? buf.subarray(2) : buf;
  const label = encoding === 'utf-16le' ? 'utf-16le' : encoding === 'utf-16be' ? 'utf-16be' : 'utf-8';
  // NUL bytes in a file read as UTF-8: binary data (or UTF-16 without the byte-order mark that says so).
  if (label === 'utf-8' && body.includes(0)) {
    throw refuse('binary', 'the file is not a CSV text file (it holds binary data); export the contacts as CSV (UTF-8) and upload that');
  }
  let text: string;
  try {
    text = new TextDecoder(label, { fatal: true, ignoreBOM: true }).decode(body);
  } catch {
    const at = label === 'utf-8' ? firstBadUtf8Byte(body) : -1;
    throw refuse(
      'encoding',
      label === 'utf-8'
        ? `the file is not UTF-8 text${at >= 0 ? ` (byte ${at + 1} is not valid UTF-8)` : ''}; save it as "CSV UTF-8" and upload it again`
        : `the file starts with a UTF-16 byte-order mark but is not valid UTF-16`,
    );
  }
  // NUL and other control characters (but tab, line breaks and form feed) do not occur in text a person typed.
  const controls = text.match(/[\u0000-\u0008\u000e-\u001f\u007f]/g)?.length ?? 0;
  if (text.includes('\u0000') || controls > Math.max(8, text.length / 1000)) {
    throw refuse('binary', 'the file is not a CSV text file (it holds binary data); export the contacts as CSV and upload that');
  }
  return { text, encoding };
}

function detectEncoding(buf: Buffer): ContactImportEncoding {
  if (buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) return 'utf-8-bom';
  if (buf.length >= 2 && buf[0] === 0xff && buf[1] === 0xfe) return 'utf-16le';
  if (buf.length >= 2 && buf[0] === 0xfe && buf[1] === 0xff) return 'utf-16be';
  return 'utf-8';
}

/** Where the first byte that is not valid UTF-8 is (-1: none); only run for the error message. */
function firstBadUtf8Byte(buf: Buffer): number {
  let i = 0;
  while (i < buf.length) {
    const b = buf[i];
    const need = b < 0x80 ? 0 : b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : -1;
    if (need < 0 || i + need >= buf.length) return i;
    for (let k = 1; k <= need; k++) if ((buf[i + k] & 0xc0) !== 0x80) return i;
    i += need + 1;
  }
  return -1;
}

/** The separator of the first line (outside quotes): the most frequent of , ; and tab (comma on a tie). */
export function detectDelimiter(text: string): string {
  const counts = new Map<string, number>([
    [',', 0],
    [';', 0],
    ['\t', 0],
  ]);
  let quoted = false;
  for (const ch of text.slice(0, 64 * 1024)) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) break;
    else if (!quoted && counts.has(ch)) counts.set(ch, counts.get(ch)! + 1);
  }
  let best = ',';
  for (const [d, n] of counts) if (n > counts.get(best)!) best = d;
  return best;
}

/** The records of the text in order, the header first; a file that is not CSV throws a 400 (reason malformed). */
export async function* csvRecords(text: string, delimiter: string): AsyncGenerator<string[]> {
  const source = Readable.from(
    (function* () {
      for (let i = 0; i < text.length; i += 64 * 1024) yield text.slice(i, i + 64 * 1024);
    })(),
  );
  // Loaded on first use (an import), not at startup.
  const { parse } = (await import('csv-parse')) as { parse: typeof Parse };
  const parser = source.pipe(
    parse({
      delimiter,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: true,
      max_record_size: MAX_RECORD_CHARS,
    }),
  );
  try {
    for await (const record of parser as AsyncIterable<string[]>) yield record;
  } catch (error) {
    const e = error as { code?: string; message?: string; lines?: number };
    if (typeof e.code === 'string' && e.code.startsWith('CSV_')) {
      const detail =
        e.code === 'CSV_QUOTE_NOT_CLOSED'
          ? 'a quoted cell is not closed'
          : e.code === 'CSV_MAX_RECORD_SIZE'
            ? `a row is longer than ${MAX_RECORD_CHARS} characters`
            : (e.message ?? e.code);
      throw refuse('malformed', `the file is not valid CSV${e.lines ? ` near line ${e.lines}` : ''}: ${detail}`);
    }
    throw error;
  } finally {
    source.destroy();
  }
}

export interface CsvSummary {
  columns: string[];
  sample: string[][];
  rows: number;
}

/** The header, the first data rows and the count of data rows; refuses an empty file or one without data rows. */
export async function summarizeCsv(text: string, delimiter: string, sampleSize: number): Promise<CsvSummary> {
  let header: string[] | undefined;
  const sample: string[][] = [];
  let rows = 0;
  for await (const record of csvRecords(text, delimiter)) {
    if (!header) {
      header = record;
      if (header.length > MAX_COLUMNS) throw refuse('too_many_columns', `the file has ${header.length} columns; at most ${MAX_COLUMNS} are read`);
      continue;
    }
    if (sample.length < sampleSize) sample.push(record);
    rows++;
  }
  if (!header || header.every((c) => c.trim() === '')) throw refuse('empty', 'the file is empty; the first row should name the columns');
  if (rows === 0) throw refuse('empty', 'the file has a header but no rows of contacts');
  const columns = header.map((c, i) => c.trim() || `column ${i + 1}`);
  return { columns, sample, rows };
}
