// Text that strangers write (a mail's subject and sender name, a file's name) shown or mailed where
// it could pass for ours. One-line fields lose their line breaks and other controls, so a subject
// cannot write lines of its own into system mail; file names lose bidirectional controls, so
// "invoice\u202Efdp.exe" cannot pass for "invoiceexe.pdf".

/** C0 and C1 controls, DEL, and the Unicode line and paragraph separators. */
const LINE_BREAKING = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;
/** Bidirectional embeddings, overrides, isolates and marks (they reorder what is shown). */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** A one-line field as stored and shown: every run of controls and line breaks becomes one space. */
export function oneLine(text: string): string {
  return text.replace(LINE_BREAKING, ' ').trim();
}

/** A file name as stored and shown: each bidirectional control becomes a visible `_`. */
export function withoutBidiControls(name: string): string {
  return name.replace(BIDI_CONTROLS, '_');
}
