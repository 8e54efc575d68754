// How much the V8 heap of a long-running server may grow past what its last full GC kept.
import v8 from 'node:v8';

/**
 * Old space may grow to 1.5× of what survived the last full GC before the next one (V8 picks up to
 * 4× by itself). A migration's scan and copy promote many short-lived objects (a batch's parsed
 * mail, queries); with V8's own factor they piled up as 60–70 MB of dead old space before each full
 * GC, which was most of the import's peak RSS. Measured on a 200 MB export file's copy, against
 * V8's own factor: peak RSS 250 MB instead of 293–296 MB for about 6 % more CPU per message (1.2×
 * kept about the same RSS for 13 % more).
 */
const HEAP_GROWING_PERCENT = 50;

export function keepHeapTight(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
