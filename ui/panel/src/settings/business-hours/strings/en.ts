// Business hours: the strings in English. tr.ts has the same keys (test/panel/strings.test.ts checks it).
export const hoursEn = {
  'hours.title': 'Business hours',
  'hours.lead': 'When the team answers, on the inbox’s clock. Outside these hours the inbox counts as closed.',
  'hours.always': 'Always open',
  'hours.scheduled': 'Open on a schedule',
  'hours.open_now': 'Open now',
  'hours.opens': 'Closed; opens {when}',
  'hours.never': 'Closed; no opening hours ahead',
  'hours.closed': 'Closed',
  'hours.from': 'From, interval {n}',
  'hours.to': 'Until, interval {n}',
  'hours.add_interval': 'Add hours',
  'hours.remove_interval': 'Remove these hours',
  'hours.exceptions': 'Holidays and special days',
  'hours.no_exceptions': 'None. Add a holiday to close a day, or a day with shorter hours.',
  'hours.add_exception': 'Add a day',
  'hours.remove_exception': 'Remove this day',
  'hours.date': 'Date',
  'hours.closed_all_day': 'Closed all day',
  'hours.open_from_to': 'Open',
  'hours.day.mon': 'Monday',
  'hours.day.tue': 'Tuesday',
  'hours.day.wed': 'Wednesday',
  'hours.day.thu': 'Thursday',
  'hours.day.fri': 'Friday',
  'hours.day.sat': 'Saturday',
  'hours.day.sun': 'Sunday',
} as const;

declare module '../../../i18n' {
  interface Messages extends Record<keyof typeof hoursEn, string> {}
}
