// Notifications: the strings in Turkish, with the same keys as en.ts.
import type { notificationsEn } from './en';

export const notificationsTr: Record<keyof typeof notificationsEn, string> = {
  'notif.bell': 'Bildirimler',
  'notif.unread': 'okunmamış',
  'notif.none': 'Henüz yeni bir şey yok.',
  'notif.title': 'Bildirimler',
  'notif.lead': 'Neyin size nasıl ulaşacağını seçin. E-posta yalnızca 5 dakikadır açık bir paneliniz yoksa gelir, 10 dakikada en fazla bir tane.',
  'notif.trigger': 'Ne zaman',
  'notif.trigger.new_conversation': 'Gelen kutularımda yeni bir konuşma',
  'notif.trigger.assigned': 'Bir konuşma bana atandı',
  'notif.trigger.customer_reply': 'Bana atanmış bir konuşmada müşteri yanıt verdi',
  'notif.trigger.snooze_ended': 'Bana atanmış ertelenen bir konuşma geri döndü',
  'notif.trigger.sla_warning': 'Bana atanmış (ya da atanmamış) bir konuşmanın SLA süresi dolmak üzere',
  'notif.trigger.sla_breached': 'Bana atanmış (ya da atanmamış) bir konuşmanın SLA süresi aşıldı',
  'notif.trigger.reply_held': 'Zamanladığım bir yanıt, müşteri önce yazdığı için gönderilmedi',
  'notif.trigger.sign_in_required': 'Bir e-posta kanalının Google veya Microsoft oturumu çalışmayı bırakıyor (sahipler ve yöneticiler)',
  'notif.trigger.mention': 'Biri bir notta benden bahsetti (@ad)',
  'notif.channel.realtime': 'Panelde',
  'notif.channel.push': 'Anlık bildirim',
  'notif.channel.email': 'E-posta',
  'notif.push_no_keys':
    'Anlık bildirim kapalı: bu sunucuda Web Push anahtarları yok. Yönetici `svc vapid-keys` ile bir çift oluşturup SVC_VAPID_PUBLIC_KEY ve SVC_VAPID_PRIVATE_KEY ayarlarını yapar.',
  'notif.email_no_smtp': 'E-posta kapalı: bu sunucunun gönderim için bir posta hesabı yok (SVC_SMTP_HOST ayarlı değil).',
  'notif.push_subscribe': 'Bu tarayıcıda anlık bildirim al',
  'notif.push_on': 'Bu tarayıcı artık anlık bildirim alıyor.',
  'notif.push_off': 'Bu sunucuda Web Push kapalı.',
  'notif.push_unsupported': 'Bu tarayıcı anlık bildirim alamıyor.',
  'notif.push_denied': 'Tarayıcıda bu site için bildirimler engellendi.',
  'notif.mark_all_read': 'Tümünü okundu işaretle',
};
