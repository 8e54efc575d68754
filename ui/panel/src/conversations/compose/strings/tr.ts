// Forward and new conversations (issue 33): the strings in Turkish.
import type { composeEn } from './en';

export const composeTr: Record<keyof typeof composeEn, string> = {
  'compose.forward': 'İlet',
  'compose.forward_title': 'İlet: {subject}',
  'compose.forward_label': 'Bu iletiyi ilet',
  'compose.forward_note': 'İletilen mesajın üstüne not',
  'compose.include_attachments': 'Ekleri de ekle ({count})',
  'compose.forward_send': 'İlet',
  'compose.forwarded': 'İletildi',
  'compose.forwarded_line': '{author} tarafından {to} adresine iletildi',
  'compose.forward_hint': 'Alıcılar katılımcı olmaz; yanıtları bu konuşmaya geri gelir.',
  'compose.new': 'Yeni konuşma',
  'compose.new_shortcut': 'Yeni konuşma',
  'compose.new_title': 'Yeni konuşma',
  'compose.inbox': 'Gelen kutusu',
  'compose.no_mail_inbox': 'Henüz hiçbir gelen kutusunun e-posta kanalı yok. Ayarlar → Gelen kutuları bölümünden ekleyin.',
  'compose.subject': 'Konu',
  'compose.message': 'Mesaj',
  'compose.send': 'Gönder',
  'compose.sending': 'Gönderiliyor…',
  'compose.cancel': 'Vazgeç',
  'compose.to_required': 'Kime alanına en az bir alıcı yazın.',
  'compose.write_to': '{name} kişisine yaz',
  'compose.sent': 'Gönderildi',
};
