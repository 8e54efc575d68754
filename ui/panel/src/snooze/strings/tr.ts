// Snooze: the strings in Turkish, with the same keys as en.ts.
import type { snoozeEn } from './en';

export const snoozeTr: Record<keyof typeof snoozeEn, string> = {
  'snooze.button': 'Ertele',
  'snooze.menu': 'Şu zamana kadar ertele',
  'snooze.later_today': 'Bugün daha sonra',
  'snooze.tomorrow': 'Yarın',
  'snooze.next_monday': 'Gelecek pazartesi',
  'snooze.customer_reply': 'Müşteri yanıt verene kadar',
  'snooze.pick': 'Bir zaman seçin',
  'snooze.pick_apply': 'Ertele',
  'snooze.wake_now': 'Şimdi geri getir',
  'snooze.badge_until': '{when} zamanına kadar ertelendi',
  'snooze.badge_reply': 'Müşteri yanıt verene kadar ertelendi',
  'snooze.view': 'Ertelenenler',
  'snooze.empty': 'Ertelenen konuşma yok. Bir konuşmayı bir zamana ya da müşteri yanıt verene kadar kenara koymak için erteleyin.',
  'snooze.event_until': '{when} zamanına kadar ertelendi',
  'snooze.event_reply': 'Müşteri yanıt verene kadar ertelendi',
  'snooze.event_woke_reply': 'Geri döndü: müşteri yanıt verdi',
  'snooze.event_woke_time': 'Geri döndü: erteleme süresi doldu',
  'snooze.event_cleared': 'Erteleme bitti',
  'snooze.shortcut': 'Açık konuşmayı ertele',
};
