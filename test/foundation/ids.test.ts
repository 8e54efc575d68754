// Ids: time-sortable, and the random part of each id is its own (ids take their random bytes from
// a pool; secrets made with randomText take fresh bytes).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newId, randomText, sortableId } from '../../src/platform/ids.js';

test('ids made across many refills of the random pool never share a random part, and sort by time', () => {
  const randomParts = new Set<string>();
  const ids: string[] = [];
  // 16 random characters per id: 3,000 ids use the 4 KB pool about twelve times over.
  for (let i = 0; i < 3000; i++) {
    const id = sortableId(1_700_000_000_000 + i * 1000);
    ids.push(id);
    randomParts.add(id.slice(10));
  }
  assert.equal(randomParts.size, 3000);
  assert.deepEqual([...ids].sort(), ids);
  assert.match(newId('m'), /^m_[0-9a-hjkmnp-tv-z]{26}$/);
});

test('ids made in one millisecond increase; random text is base32 of the asked length', () => {
  const ms = 1_700_000_000_123;
  const a = sortableId(ms);
  const b = sortableId(ms);
  assert.ok(b > a);
  const text = randomText(40);
  assert.match(text, /^[0-9a-hjkmnp-tv-z]{40}$/);
  assert.notEqual(randomText(40), text);
});
