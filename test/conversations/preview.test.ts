// previewOf reads only the start of a long body; it must give what collapsing and trimming the
// whole body gives, whatever whitespace surrounds the point where it stops reading.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { previewOf } from '../../src/conversations/preview.js';

const whole = (body: string) => body.replace(/\s+/g, ' ').trim().slice(0, 200);

test('the preview of a long body is the start of the whole body collapsed to one line', () => {
  const bodies: string[] = [
    'word '.repeat(1000),
    `\r\n\r\n   \t${'Hello,\r\n\r\nI have a question about my order. '.repeat(80)}`,
    ' '.repeat(1100) + 'late words '.repeat(50),
    ' '.repeat(5000),
    `${'a'.repeat(150)}${' '.repeat(900)}${'b'.repeat(100)}`,
    `${'a'.repeat(199)}${' '.repeat(1000)}b`,
    `${'a'.repeat(200)}${' '.repeat(1000)}b`,
    `${'a'.repeat(201)}${'\u00a0'.repeat(900)}\u2028${'c'.repeat(10)}`,
    `${'x '.repeat(511)}${'\u{1F600}'.repeat(300)}`,
    `${' \n'.repeat(400)}${'y'.repeat(150)}${'\t'.repeat(600)}`,
  ];
  for (let n = 1015; n < 1030; n++) bodies.push(`${'z'.repeat(180)}${' '.repeat(n - 180)}${'w'.repeat(40)}`, `${' '.repeat(n)}${'v'.repeat(300)}`);
  for (const body of bodies) assert.equal(previewOf(body), whole(body));
});
