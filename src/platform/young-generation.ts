// The young generation while the server starts. Loading its ~1,000 modules and migrating keep most
// of what they allocate, so V8 doubled the young generation at nearly every scavenge up to its
// maximum (two semi-spaces of 16 MB) and an idle server kept those ~30 MB resident (bench/startup:
// idle RSS 143–153 MB, 117 MB with the young generation left at its start size; issue 42). While
// `serve` starts, the young generation does not grow (V8 reads the growth factor at each growth);
// once the server listens, V8's default factor (2) applies again, so traffic grows it as before.
import v8 from 'node:v8';

const V8_DEFAULT_GROWTH_FACTOR = 2;

export function holdYoungGeneration(): void {
  v8.setFlagsFromString('--semi-space-growth-factor=1');
}

export function releaseYoungGeneration(): void {
  v8.setFlagsFromString(`--semi-space-growth-factor=${V8_DEFAULT_GROWTH_FACTOR}`);
}
