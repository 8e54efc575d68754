// The one-line start of a message that conversation lists and the widget show.

const PREVIEW_CHARS = 200;
/** How much of a long body is collapsed first (enough unless it is mostly whitespace). */
const PREVIEW_SCAN_CHARS = 1024;

/** The start of a message as one line, for lists. */
export function previewOf(body: string): string {
  // Collapsing a prefix gives a prefix of the collapsed whole; once it is longer than the preview
  // (so a trailing space the full trim would drop is past the end), the rest of the body is not read.
  if (body.length > PREVIEW_SCAN_CHARS) {
    const start = body.slice(0, PREVIEW_SCAN_CHARS).replace(/\s+/g, ' ').trimStart();
    if (start.length > PREVIEW_CHARS) return start.slice(0, PREVIEW_CHARS);
  }
  return body.replace(/\s+/g, ' ').trim().slice(0, PREVIEW_CHARS);
}
