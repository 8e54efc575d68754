// Limits "in characters" count characters (Unicode code points), as people and the spec count them,
// not UTF-16 units: an emoji is one character, not two.

/** The number of code points in text (a lone surrogate counts as one). */
export function charCount(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}
