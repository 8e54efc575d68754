// Reports: the strings in English. tr.ts has the same keys (test/panel/strings.test.ts checks it).
export const reportsEn = {
  'reports.title': 'Reports',
  'reports.from': 'From',
  'reports.to': 'To',
  'reports.inbox': 'Inbox',
  'reports.all_inboxes': 'All inboxes',
  'reports.member': 'Member',
  'reports.all_members': 'All members',
  'reports.totals': 'Totals for the period',
  'reports.opened': 'Opened',
  'reports.closed': 'Closed',
  'reports.replies': 'Replies',
  'reports.first_response_median': 'First response (median)',
  'reports.first_response_p90': 'First response (90%)',
  'reports.resolution_median': 'Resolution (median)',
  'reports.resolution_p90': 'Resolution (90%)',
  'reports.rating_average': 'Average rating',
  'reports.rating_count': 'Ratings',
  'reports.volume': 'Conversations and replies per day',
  'reports.times': 'Response and resolution times per day (hours)',
  'reports.ratings': 'Ratings per day',
  'reports.chart_label': 'Chart: {title}. The same figures are in the table below.',
  'reports.as_table': 'Show as a table',
  'reports.day': 'Day',
  'reports.usage': 'Usage',
  'reports.usage_by_month': 'Usage by month',
  'reports.storage': 'Stored files: {mb} MB',
  'reports.month': 'Month',
  'reports.conversations_billed': 'Conversations',
  'reports.conversations_imported': 'Imported conversations',
  'reports.messages_billed': 'Messages',
  'reports.messages_imported': 'Imported messages',
} as const;

declare module '../../i18n' {
  interface Messages extends Record<keyof typeof reportsEn, string> {}
}
