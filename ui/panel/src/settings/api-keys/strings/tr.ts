// Settings › API keys: the strings in Turkish, with the same keys as en.ts.
import type { apiKeysEn } from './en';

export const apiKeysTr: Record<keyof typeof apiKeysEn, string> = {
  'keys.lead':
    'Anahtarlar kendi sistemlerinizin /v1 API’sini kullanmasını sağlar. Her anahtar verdiğiniz yetkilere sahiptir ve gelen kutularıyla sınırlanabilir.',
  'keys.name': 'Ad',
  'keys.scopes': 'Yetkiler',
  'keys.scopes_hint': 'Hiçbiri seçilmezse tüm yetkiler verilir.',
  'keys.inboxes': 'Gelen kutularıyla sınırla',
  'keys.inboxes_hint': 'Hiçbiri seçilmezse tüm gelen kutuları.',
  'keys.expires': 'Bitiş tarihi (isteğe bağlı)',
  'keys.new': 'Yeni API anahtarı',
  'keys.created': '{name} anahtarı oluşturuldu',
  'keys.empty': 'Henüz API anahtarı yok. Arka ucunuzu ya da betiklerinizi bağlamak için bir tane oluşturun.',
  'keys.revoke': 'İptal et',
  'keys.revoke_confirm': '{name} iptal edilsin mi? Onu kullanan her şey hemen durur.',
  'keys.revoked': 'İptal edildi',
  'keys.last_used': 'Son kullanım',
  'keys.never': 'hiç',
  'keys.all_scopes': 'tüm yetkiler',
  'keys.all_inboxes': 'tüm gelen kutuları',
};
