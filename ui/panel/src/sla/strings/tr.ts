// SLA: the strings in Turkish, with the same keys as en.ts.
import type { slaEn } from './en';

export const slaTr: Record<keyof typeof slaEn, string> = {
  'sla.left': '{span} kaldı',
  'sla.over': '{span} gecikti',
  'sla.clock_title': '{target} için son zaman {when}',
  'sla.unit.d': ' g',
  'sla.unit.h': ' sa',
  'sla.unit.m': ' dk',
  'sla.target.first_response': 'İlk yanıt',
  'sla.target.next_response': 'Sonraki yanıt',
  'sla.target.resolution': 'Çözüm',
  'sla.title': 'SLA hedefleri',
  'sla.lead':
    'Ekibin ne kadar sürede yanıt verip çözdüğü, bu gelen kutusunun çalışma saatleriyle sayılır. Beklemede ya da ertelenmiş geçen süre çözüme sayılmaz; müşteriyi beklerken geçen süre hiç sayılmaz. İzlemek istemediğiniz alanı boş bırakın.',
  'sla.minutes': 'dakika',
  'sla.row.default': 'Tüm konuşmalar',
  'sla.row.priority': 'Öncelik: {priority}',
  'sla.row.priority_hint': 'Boş satır: yukarıdaki hedefler geçerli.',
  'sla.by_priority': 'Önceliğe göre farklı hedefler',
  'sla.save': 'SLA hedeflerini kaydet',
  'sla.none': 'Henüz SLA yok: saatleri başlatmak için bir hedef girin.',
};
