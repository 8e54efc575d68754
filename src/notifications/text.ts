// What a notification says, in the member's language (people.locale: en or tr; others get en).
import type { NotificationTrigger } from '../db/schema.js';

export interface NotificationFacts {
  subject: string | null;
  contact: string | null;
  author: string | null;
  preview: string;
}

type Texts = {
  noSubject: string;
  title: Record<NotificationTrigger, (f: NotificationFacts, subject: string) => string>;
  mailSubject: (n: number) => string;
  mailIntro: string;
  mailFooter: (settingsUrl: string) => string;
};

const TEXTS: Record<'en' | 'tr', Texts> = {
  en: {
    noSubject: '(no subject)',
    title: {
      new_conversation: (f, subject) => `New conversation from ${f.contact ?? 'a customer'}: ${subject}`,
      assigned: (_f, subject) => `Assigned to you: ${subject}`,
      customer_reply: (f, subject) => `${f.contact ?? 'A customer'} replied: ${subject}`,
      mention: (f, subject) => `${f.author ?? 'A teammate'} mentioned you: ${subject}`,
    },
    mailSubject: (n) => (n === 1 ? '1 new notification' : `${n} new notifications`),
    mailIntro: 'While you were away from the panel:',
    mailFooter: (url) => `You get this mail because no panel of yours was open. Choose what reaches you under My account: ${url}`,
  },
  tr: {
    noSubject: '(konu yok)',
    title: {
      new_conversation: (f, subject) => `${f.contact ?? 'Bir müşteri'} yeni bir konuşma başlattı: ${subject}`,
      assigned: (_f, subject) => `Size atandı: ${subject}`,
      customer_reply: (f, subject) => `${f.contact ?? 'Bir müşteri'} yanıt verdi: ${subject}`,
      mention: (f, subject) => `${f.author ?? 'Bir ekip arkadaşı'} sizden bahsetti: ${subject}`,
    },
    mailSubject: (n) => `${n} yeni bildirim`,
    mailIntro: 'Panelden uzaktayken:',
    mailFooter: (url) => `Açık bir paneliniz olmadığı için bu e-postayı aldınız. Neyin size ulaşacağını Hesabım sayfasında seçin: ${url}`,
  },
};

export function textsFor(locale: string): Texts {
  return locale.toLowerCase().startsWith('tr') ? TEXTS.tr : TEXTS.en;
}

export function notificationText(locale: string, trigger: NotificationTrigger, facts: NotificationFacts): { title: string; body: string } {
  const t = textsFor(locale);
  return { title: t.title[trigger](facts, facts.subject?.trim() || t.noSubject), body: facts.preview };
}
