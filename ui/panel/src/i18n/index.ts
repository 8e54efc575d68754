// Strings: one catalogue per language, joined from the shared strings (./en.ts, ./tr.ts) and each
// area's strings/ folder (../strings.ts adds those at start-up); the person's locale picks it.
import { signal } from '@preact/signals';
import { commonEn } from './en';
import { commonTr } from './tr';

/** Every key the panel knows: the shared ones here, each area's added by its strings/en.ts. */
export interface Messages extends Record<keyof typeof commonEn, string> {}
export type MessageKey = keyof Messages;

const catalogues: Record<Locale, Record<string, string>> = { en: { ...commonEn }, tr: { ...commonTr } };
export type Locale = 'en' | 'tr';

export const locale = signal<Locale>(pickLocale(navigator.language));

export function pickLocale(tag: string | null | undefined): Locale {
  return tag && tag.toLowerCase().startsWith('tr') ? 'tr' : 'en';
}

export function setLocale(tag: string | null | undefined) {
  locale.value = pickLocale(tag);
  document.documentElement.lang = locale.value;
}

/** Adds an area's strings to a language's catalogue. */
export function addStrings(lang: Locale, ...parts: Partial<Record<MessageKey, string>>[]) {
  Object.assign(catalogues[lang], ...parts);
}

export function t(key: MessageKey, vars?: Record<string, string | number>): string {
  const text = catalogues[locale.value][key] ?? catalogues.en[key];
  return vars ? text.replace(/\{(\w+)\}/g, (_, name: string) => String(vars[name] ?? '')) : text;
}

/** `key`, or `key_one` where the language says the count is singular and its catalogue has that form (Turkish has none). */
export function tCount(key: MessageKey, count: number, vars?: Record<string, string | number>): string {
  const one = `${key}_one`;
  const useOne = new Intl.PluralRules(locale.value).select(count) === 'one' && one in catalogues[locale.value];
  return t((useOne ? one : key) as MessageKey, { count, ...vars });
}

/** What a conversation is called: its subject, else (a chat, feedback or API conversation has none) its channel. */
export function conversationTitle(c: { subject: string | null; source: 'email' | 'chat' | 'feedback' | 'api' }): string {
  return c.subject || (c.source === 'email' ? t('list.no_subject') : t(`source.${c.source}`));
}

// Formatters are made once per language: making one costs far more than using it, and the list
// formats two times for every row it shows while scrolling.
const formatters = new Map<string, Intl.RelativeTimeFormat | Intl.DateTimeFormat | Intl.NumberFormat>();
function formatter<T extends Intl.RelativeTimeFormat | Intl.DateTimeFormat | Intl.NumberFormat>(kind: string, make: (tag: string) => T): T {
  const key = `${kind}:${locale.value}`;
  let f = formatters.get(key) as T | undefined;
  if (!f) formatters.set(key, (f = make(locale.value)));
  return f;
}

const rtf = () => formatter('relative', (tag) => new Intl.RelativeTimeFormat(tag, { numeric: 'auto', style: 'short' }));

/**
 * The time relative times are counted from, moved on every 20 seconds: a component that shows a
 * relative time reads it while rendering, so a panel left open never shows "4 min ago" for longer.
 */
export const relativeNow = signal(Date.now());
setInterval(() => {
  relativeNow.value = Date.now();
}, 20_000);

/** "3 min", "yesterday", or a date: for lists. */
export function relativeTime(isoTime: string, now = relativeNow.value): string {
  const then = Date.parse(isoTime);
  const seconds = Math.round((then - now) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 45) return t('time.now');
  if (abs < 3600) return rtf().format(Math.round(seconds / 60), 'minute');
  if (abs < 86400) return rtf().format(Math.round(seconds / 3600), 'hour');
  if (abs < 2 * 86400 && seconds < 0) return t('time.yesterday');
  if (abs < 7 * 86400) return rtf().format(Math.round(seconds / 86400), 'day');
  return formatter('day', (tag) => new Intl.DateTimeFormat(tag, { day: 'numeric', month: 'short' })).format(then);
}

/** A time of day in the person's language: "14:05", "2:05 PM". */
export function clockTime(isoTime: string): string {
  return formatter('clock-time', (tag) => new Intl.DateTimeFormat(tag, { hour: 'numeric', minute: '2-digit' })).format(Date.parse(isoTime));
}

/** A duration in the unit that fits it: "45 sec", "12 min", "3.5 hr", "2.3 days" (in the person's language). */
export function durationText(seconds: number): string {
  const [value, unit, digits] =
    seconds < 60
      ? [seconds, 'second', 0]
      : seconds < 3600
        ? [seconds / 60, 'minute', 0]
        : seconds < 2 * 86400
          ? [seconds / 3600, 'hour', 1]
          : [seconds / 86400, 'day', 1];
  return formatter(
    `duration-${unit}-${digits}`,
    (tag) => new Intl.NumberFormat(tag, { style: 'unit', unit, unitDisplay: 'short', maximumFractionDigits: digits }),
  ).format(value);
}

/** A calendar day (YYYY-MM-DD, a UTC day as reports count them) in the person's locale: "Nov 3, 2026", "3 Kas 2026". */
export function calendarDay(day: string): string {
  return formatter('calendar-day', (tag) => new Intl.DateTimeFormat(tag, { dateStyle: 'medium', timeZone: 'UTC' })).format(Date.parse(`${day}T00:00:00Z`));
}

/** A calendar day without its year, for chart axes: "Nov 3", "3 Kas". */
export function shortCalendarDay(day: string): string {
  return formatter('short-calendar-day', (tag) => new Intl.DateTimeFormat(tag, { day: 'numeric', month: 'short', timeZone: 'UTC' })).format(
    Date.parse(`${day}T00:00:00Z`),
  );
}

/** A calendar month (YYYY-MM) in the person's locale: "Jan 2026", "Oca 2026". */
export function calendarMonth(month: string): string {
  return formatter('calendar-month', (tag) => new Intl.DateTimeFormat(tag, { month: 'short', year: 'numeric', timeZone: 'UTC' })).format(
    Date.parse(`${month}-01T00:00:00Z`),
  );
}

/** The full date and time in the person's locale and time zone: in threads and tooltips. */
export function absoluteTime(isoTime: string): string {
  return formatter('absolute', (tag) => new Intl.DateTimeFormat(tag, { dateStyle: 'medium', timeStyle: 'short' })).format(Date.parse(isoTime));
}
