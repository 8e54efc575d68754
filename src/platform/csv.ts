// The one CSV writer of every export (contacts, conversations, reports, analytics): RFC 4180 through
// csv-stringify, CRLF line ends, and cells a spreadsheet would run as a formula (starting with
// = + - @, tab or CR; negative numbers stay numbers) prefixed with an apostrophe (escape_formulas).
// The contacts import takes that apostrophe off again, so an export reads back as the same data.
import { createRequire } from 'node:module';
import type { stringify as Stringify } from 'csv-stringify/sync';

// A lone CR in a cell is not quoted by csv-stringify (it only looks for the record delimiter, CRLF),
// and spreadsheets end the row there: every cell holding CR or LF is quoted.
const OPTIONS = { escape_formulas: true, record_delimiter: 'windows' as const, quoted_match: /[\r\n]/ };

export type CsvCell = string | number | boolean | null | undefined;

// Required on first use (an export), not at startup.
let stringify: typeof Stringify | undefined;

export function csvText(rows: readonly (readonly CsvCell[])[]): string {
  stringify ??= (createRequire(import.meta.url)('csv-stringify/sync') as { stringify: typeof Stringify }).stringify;
  return stringify(
    rows.map((r) => r.map((v) => v ?? '')),
    OPTIONS,
  );
}

/** A cell as written by csvText with its formula escape taken off (the import's inverse). */
export function unescapeFormula(cell: string): string {
  return /^'[=+\-@\t\r]/.test(cell) ? cell.slice(1) : cell;
}

/** A download's file name in the characters every file system takes. */
export function csvFilename(name: string): string {
  return `${name.replace(/[^A-Za-z0-9._-]+/g, '_')}.csv`;
}
