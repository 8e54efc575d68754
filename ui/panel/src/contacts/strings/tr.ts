// Contacts: the strings in Turkish, with the same keys as en.ts.
import type { contactsEn } from './en';

export const contactsTr: Record<keyof typeof contactsEn, string> = {
  'details.attributes': 'Özellikler',
  'contact.edit': 'Kişiyi düzenle',
  'contact.emails': 'E-posta adresleri, her satıra bir tane',
  'contact.saved': 'Kişi kaydedildi',
  'attr.add': 'Özellik ekle',
  'attr.none': 'Henüz özellik yok.',
  'attr.key': 'Özellik adı',
  'attr.value': 'Değer',
  'attr.type': 'Tür',
  'attr.type_text': 'Metin',
  'attr.type_number': 'Sayı',
  'attr.type_bool': 'Evet/hayır',
  'attr.yes': 'Evet',
  'attr.no': 'Hayır',
  'attr.edit': '{key} özelliğini düzenle',
  'attr.remove': '{key} özelliğini kaldır',
  'attr.removed': '{key} kaldırıldı',
  'attr.cancel': 'Vazgeç',
  'attr.bad_key': 'Özelliğe en çok 64 karakterlik bir ad verin.',
  'attr.bad_number': '42 ya da 9,5 gibi bir sayı girin.',
  'attr.bad_text': 'Metin en çok 1.000 karakter olabilir.',
  'attr.structured': 'Yapılandırılmış değer (API ile değiştirin)',
};
