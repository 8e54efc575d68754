// Signing in and invites: the strings in Turkish, with the same keys as en.ts.
import type { signInEn } from './en';

export const signInTr: Record<keyof typeof signInEn, string> = {
  'signin.title': 'Giriş yap',
  'signin.lead': 'Size tek kullanımlık bir kod göndereceğiz.',
  'signin.email': 'İş e-postası',
  'signin.send': 'Kodu gönder',
  'signin.code': 'E-postadaki kod',
  'signin.code_sent': '{email} adresinin bir hesabı varsa kod yolda. Kod birkaç dakika geçerlidir.',
  'signin.verify': 'Giriş yap',
  'signin.other_address': 'Başka bir adres kullan',
  'signin.no_mail':
    'Bu sunucunun e-posta hesabı yok, bu yüzden giriş kodu gönderemiyor. Yöneticinizden bir giriş bağlantısı isteyin (svc person sign-in-link --email …).',
  'signin.passkey': 'Geçiş anahtarıyla giriş yap',
  'signin.or': 'veya',
  'signin.link_failed': 'Bu giriş bağlantısı kullanılmış, süresi dolmuş ya da hatalı. Yeni bir bağlantı isteyin.',
  'signin.passkey_cancelled': 'Geçiş anahtarı penceresi kapatıldı. Yeniden deneyin ya da kodla giriş yapın.',
  'signin.link_title': 'Giriş yapılıyor',
  'invite.offer': '{workspace} çalışma alanına {role} olarak katılmaya davet edildiniz ({email}).',
  'invite.lead': 'svc üzerinde bir çalışma alanına davet edildiniz.',
  'invite.name': 'Adınız',
  'invite.accept': 'Daveti kabul et',
  'invite.sign_in_first': 'Bu adresin zaten bir hesabı var. O kişi olarak giriş yapın, sonra bağlantıyı yeniden açın.',
  'invite.failed': 'Bu davet kullanılamıyor: {error}',
  'invite.missing': 'Bağlantı eksik. Davet e-postasındaki bağlantının tamamını açın.',
  'signin.link_checking': 'Giriş bağlantısı denetleniyor…',
  'signin.link_ask': '{email} olarak giriş yapılsın mı?',
  'signin.link_sign_in': '{email} olarak giriş yap',
  'signin.link_cancel': 'Vazgeç',
  'signin.link_warning':
    'Yalnızca bu bağlantıyı siz istediyseniz devam edin. İstemediğiniz bir bağlantı, sizi kendi hesabında çalıştırmak isteyen birinden gelmiş olabilir.',
  'signin.link_switch_lead': '{current} olarak giriş yaptınız. Bu bağlantı bu tarayıcıda bunun yerine {email} olarak giriş yapar.',
  'signin.link_switch': '{email} hesabına geç',
  'signin.link_stay': '{email} olarak kal',
  'signin.link_already': 'Zaten {email} olarak giriş yaptınız.',
  'signin.link_continue': 'Devam',
};
