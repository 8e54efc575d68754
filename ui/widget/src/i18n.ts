// The widget's strings: English and Turkish, chosen by the inbox locale (tr is typed against en).
const en = {
  open_chat: 'Open chat',
  close_chat: 'Close chat',
  unread: '{count} unread',
  title_hint: '({count}) New message',
  online_now: 'Online now',
  reply_soon: 'We’ll reply as soon as we can',
  away_until: 'We are away; we answer from {when}',
  replies_in: 'Usually replies in {time}',
  minutes: '{n} minutes',
  hours: '{n} hours',
  days: '{n} days',
  reconnecting: 'Reconnecting…',
  write: 'Write a message',
  format_hint: 'Formatting: **bold**, _italic_, `code`, - list, > quote; links are linked',
  send: 'Send',
  attach: 'Attach a file',
  remove_file: 'Remove {name}',
  drop_files: 'Drop files to attach them',
  team_typing: 'The team is typing…',
  you: 'You',
  team: 'Team',
  email_ask_offline: 'We are away right now. Leave your e-mail address and we will reply by mail.',
  email_ask: 'Your e-mail address, so we can reply.',
  email_label: 'E-mail address',
  email_save: 'Continue',
  skip: 'Skip',
  email_invalid: 'Please enter a valid e-mail address.',
  conversations: 'Your conversations',
  new_conversation: 'New conversation',
  back: 'Back to conversations',
  send_failed: 'Could not send: {error}',
  load_failed: 'Could not load the chat: {error}',
  retry: 'Retry',
  too_large: 'The file is too large.',
  chat_with: 'Chat with {name}',
  messages: 'Messages',
};
export type Key = keyof typeof en;
const tr: Record<Key, string> = {
  open_chat: 'Sohbeti aç',
  close_chat: 'Sohbeti kapat',
  unread: '{count} okunmamış',
  title_hint: '({count}) Yeni mesaj',
  online_now: 'Şu anda çevrimiçi',
  reply_soon: 'En kısa sürede yanıt vereceğiz',
  away_until: 'Şu an burada değiliz; {when} itibarıyla yanıt veriyoruz',
  replies_in: 'Genellikle {time} içinde yanıt verir',
  minutes: '{n} dakika',
  hours: '{n} saat',
  days: '{n} gün',
  reconnecting: 'Yeniden bağlanıyor…',
  write: 'Bir mesaj yazın',
  format_hint: 'Biçimlendirme: **kalın**, _italik_, `kod`, - liste, > alıntı; adresler bağlantı olur',
  send: 'Gönder',
  attach: 'Dosya ekle',
  remove_file: '{name} dosyasını kaldır',
  drop_files: 'Eklemek için dosyaları bırakın',
  team_typing: 'Ekip yazıyor…',
  you: 'Siz',
  team: 'Ekip',
  email_ask_offline: 'Şu an burada değiliz. E-posta adresinizi bırakın, size e-postayla yanıt verelim.',
  email_ask: 'Size yanıt verebilmemiz için e-posta adresiniz.',
  email_label: 'E-posta adresi',
  email_save: 'Devam',
  skip: 'Atla',
  email_invalid: 'Lütfen geçerli bir e-posta adresi girin.',
  conversations: 'Sohbetleriniz',
  new_conversation: 'Yeni sohbet',
  back: 'Sohbetlere dön',
  send_failed: 'Gönderilemedi: {error}',
  load_failed: 'Sohbet yüklenemedi: {error}',
  retry: 'Yeniden dene',
  too_large: 'Dosya çok büyük.',
  chat_with: '{name} ile sohbet',
  messages: 'Mesajlar',
};

export type Locale = 'en' | 'tr';
let current: Locale = 'en';

export function setLocale(tag: string | null | undefined): Locale {
  current = tag && tag.toLowerCase().startsWith('tr') ? 'tr' : 'en';
  return current;
}
export const locale = () => current;

export function t(key: Key, vars?: Record<string, string | number>): string {
  const text = (current === 'tr' ? tr : en)[key];
  return vars ? text.replace(/\{(\w+)\}/g, (_, name: string) => String(vars[name] ?? '')) : text;
}

/** "usually replies in …" from the inbox's expected reply minutes. */
export function replyTime(minutes: number): string {
  if (minutes < 90) return t('minutes', { n: Math.max(1, Math.round(minutes)) });
  if (minutes < 48 * 60) return t('hours', { n: Math.round(minutes / 60) });
  return t('days', { n: Math.round(minutes / 1440) });
}
