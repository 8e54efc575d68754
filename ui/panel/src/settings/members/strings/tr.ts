// Settings › Members: the strings in Turkish, with the same keys as en.ts.
import type { membersEn } from './en';

export const membersTr: Record<keyof typeof membersEn, string> = {
  'members.lead': 'Üyeleri sahipler ve yöneticiler yönetir. Temsilciler konuşmaları yanıtlar ve kişileri yönetir.',
  'members.role': 'Rol',
  'role.owner': 'Sahip',
  'role.admin': 'Yönetici',
  'role.agent': 'Temsilci',
  'members.last_seen': 'Son görülme {when}',
  'members.never_seen': 'Henüz görülmedi',
  'members.remove': 'Çıkar',
  'members.leave': 'Çalışma alanından ayrıl',
  'members.remove_lead': '{name} çıkarılsın mı? Erişimini hemen kaybeder ve açık konuşmalarının ataması kaldırılır.',
  'members.leave_lead': '{workspace} çalışma alanından ayrılınsın mı? Erişiminizi hemen kaybedersiniz.',
  'members.inboxes': 'Bu temsilcinin gördüğü gelen kutuları',
  'members.all_inboxes': 'Tüm gelen kutuları',
  'invites.title': 'Birini davet edin',
  'invites.email': 'E-posta adresi',
  'invites.send': 'Davet gönder',
  'invites.link': '{email} için davet bağlantısı',
  'invites.mail_sent': 'Davet e-postayla gönderildi. Bağlantıyı kendiniz de iletebilirsiniz:',
  'invites.mail_not_sent': 'Sunucu e-posta gönderemedi: bu bağlantıyı kendiniz iletin.',
  'invites.pending': 'Bekleyen davetler',
  'invites.expires': '{when} sona erer',
  'invites.revoke': 'İptal et',
  'invites.resend': 'Yeniden gönder',
};
