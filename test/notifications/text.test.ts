// What a notification says: the subject after the title when there is one; a chat (no subject)
// ends at the title, its preview is the body. English and Turkish.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { notificationText } from '../../src/notifications/text.js';

test('a notification names the subject when there is one, and only then', () => {
  const facts = { subject: 'Broken order', contact: 'Ada', author: 'Deniz', preview: 'It arrived broken.' };
  assert.deepEqual(notificationText('en', 'new_conversation', facts), { title: 'New conversation from Ada: “Broken order”', body: 'It arrived broken.' });
  assert.equal(notificationText('tr-TR', 'customer_reply', facts).title, 'Ada yanıt verdi: “Broken order”');
  const chat = { ...facts, subject: null, contact: 'Visitor Kim', preview: 'Do you ship to Canada?' };
  assert.deepEqual(notificationText('en', 'new_conversation', chat), { title: 'New conversation from Visitor Kim', body: 'Do you ship to Canada?' });
  assert.equal(notificationText('en', 'assigned', { ...chat, subject: '  ' }).title, 'Assigned to you');
  assert.equal(notificationText('tr', 'mention', chat).title, 'Deniz sizden bahsetti');
  assert.equal(notificationText('de', 'customer_reply', { ...chat, contact: null }).title, 'A customer replied');
});
