// What a notification says, in the member's language (people.locale: en or tr; others get en).
import type { NotificationTrigger } from '../db/schema.js';

export interface NotificationFacts {
  subject: string | null;
  contact: string | null;
  author: string | null;
  preview: string;
  /** SLA notices: the target's name (already in the member's language). */
  target?: string;
  /** sign_in_required: what the refused sign-in stopped (sending replies unless said). */
  stopped?: 'sending' | 'reading';
}

type Texts = {
  /** The title before the subject (a chat has none: the title ends there, the preview follows). */
  title: Record<NotificationTrigger, (f: NotificationFacts) => string>;
  mailSubject: (n: number) => string;
  mailIntro: string;
  mailFooter: (settingsUrl: string) => string;
};

const TEXTS: Record<'en' | 'tr', Texts> = {
  en: {
    title: {
      new_conversation: (f) => `New conversation from ${f.contact ?? 'a customer'}`,
      assigned: () => 'Assigned to you',
      customer_reply: (f) => `${f.contact ?? 'A customer'} replied`,
      mention: (f) => `${f.author ?? 'A teammate'} mentioned you`,
      snooze_ended: () => 'Back from snooze',
      sla_warning: (f) => `${f.target ?? 'SLA'} due soon`,
      sla_breached: (f) => `${f.target ?? 'SLA'} overdue`,
      reply_held: (f) => `Not sent: ${f.contact ?? 'the customer'} wrote first`,
      sign_in_required: (f) => `Sign in again: ${f.target ?? 'an e-mail channel'} ${f.stopped === 'reading' ? 'cannot read its mailbox' : 'cannot send'}`,
    },
    mailSubject: (n) => (n === 1 ? '1 new notification' : `${n} new notifications`),
    mailIntro: 'While you were away from the panel:',
    mailFooter: (url) => `You get this mail because no panel of yours was open. Choose what reaches you under My account: ${url}`,
  },
  tr: {
    title: {
      new_conversation: (f) => `${f.contact ?? 'Bir müşteri'} yeni bir konuşma başlattı`,
      assigned: () => 'Size atandı',
      customer_reply: (f) => `${f.contact ?? 'Bir müşteri'} yanıt verdi`,
      mention: (f) => `${f.author ?? 'Bir ekip arkadaşı'} sizden bahsetti`,
      snooze_ended: () => 'Ertelenen konuşma geri döndü',
      sla_warning: (f) => `${f.target ?? 'SLA'} süresi dolmak üzere`,
      sla_breached: (f) => `${f.target ?? 'SLA'} süresi aşıldı`,
      reply_held: (f) => `Gönderilmedi: ${f.contact ?? 'müşteri'} önce yazdı`,
      sign_in_required: (f) =>
        `Yeniden oturum açın: ${f.target ?? 'bir e-posta kanalı'} ${f.stopped === 'reading' ? 'posta kutusunu okuyamıyor' : 'gönderemiyor'}`,
    },
    mailSubject: (n) => `${n} yeni bildirim`,
    mailIntro: 'Panelden uzaktayken:',
    mailFooter: (url) => `Açık bir paneliniz olmadığı için bu e-postayı aldınız. Neyin size ulaşacağını Hesabım sayfasında seçin: ${url}`,
  },
};

const SLA_TARGET_NAMES: Record<'en' | 'tr', Record<string, string>> = {
  en: { first_response: 'First response', next_response: 'Next response', resolution: 'Resolution' },
  tr: { first_response: 'İlk yanıt', next_response: 'Sonraki yanıt', resolution: 'Çözüm' },
};

/** An SLA target's name in the member's language. */
export function slaTargetName(locale: string, target: string): string {
  return SLA_TARGET_NAMES[locale.toLowerCase().startsWith('tr') ? 'tr' : 'en'][target] ?? target;
}

export function textsFor(locale: string): Texts {
  return locale.toLowerCase().startsWith('tr') ? TEXTS.tr : TEXTS.en;
}

export function notificationText(locale: string, trigger: NotificationTrigger, facts: NotificationFacts): { title: string; body: string } {
  const t = textsFor(locale);
  const subject = facts.subject?.trim();
  // The subject is a stranger's words: quoted, so in a mail or a push it never reads as ours.
  return { title: subject ? `${t.title[trigger](facts)}: “${subject}”` : t.title[trigger](facts), body: facts.preview };
}
