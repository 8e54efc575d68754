// How much the V8 heap of a long-running server may grow past what its last full GC kept.
import v8 from 'node:v8';
import vm from 'node:vm';

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

let fullGc: (() => void) | undefined;

/**
 * A full GC now, after a large piece of work whose data is all dead (a migration's plan). V8 sets
 * the next full GC's limit from what the last one kept (1.5× above): one that ran while the plan of
 * 69,538 messages was alive set it from the plan, so the copy that followed filled the heap with its
 * dead batches up to that limit before collecting (the 1 GB export's copy peak, issue 19).
 * Collecting once the plan is gone sets the limit from what is really live. It pauses the process
 * for the one collection (tens of ms).
 */
export function collectDeadHeap(): void {
  if (!fullGc) {
    v8.setFlagsFromString('--expose-gc');
    fullGc = vm.runInNewContext('gc') as () => void;
  }
  fullGc();
}

/**
 * The young generation while the server starts. Loading its ~1,000 modules and migrating keep most
 * of what they allocate, so V8 doubled the young generation at nearly every scavenge up to its
 * maximum (two semi-spaces of 16 MB) and an idle server kept those ~30 MB resident (bench/startup:
 * idle RSS 143–153 MB; 115–118 MB with it held; issue 42). While `serve` starts, the young
 * generation does not grow (V8 reads the growth factor at each growth); once the server listens,
 * V8's default factor applies again, so traffic grows it as before.
 */
export function holdYoungGeneration(): void {
  held = true;
  v8.setFlagsFromString('--semi-space-growth-factor=1');
}

const V8_DEFAULT_SEMI_SPACE_GROWTH_FACTOR = 2;

let held = false;
let afterRelease: (() => void)[] = [];

export function releaseYoungGeneration(): void {
  v8.setFlagsFromString(`--semi-space-growth-factor=${V8_DEFAULT_SEMI_SPACE_GROWTH_FACTOR}`);
  held = false;
  const waiting = afterRelease;
  afterRelease = [];
  for (const fn of waiting) fn();
}

/**
 * Runs `fn` now, or once the young generation is released. A worker thread started while it is held
 * would undo the hold: V8 sets the growth factor back to at least 2 for the whole process when it
 * configures a new isolate's heap (the SQLite checkpointer started during migrations let an idle
 * server's new space grow to 8 MB).
 */
export function afterYoungGenerationHold(fn: () => void): void {
  if (held) afterRelease.push(fn);
  else fn();
}
