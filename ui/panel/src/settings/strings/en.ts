// The settings page: the strings in English. tr.ts has the same keys (test/panel/strings.test.ts checks it).
export const settingsEn = {
  'settings.title': 'Settings',
  'settings.menu_current': 'Settings: {page}',
} as const;

declare module '../../i18n' {
  interface Messages extends Record<keyof typeof settingsEn, string> {}
}
