// The settings page: the strings in Turkish, with the same keys as en.ts.
import type { settingsEn } from './en';

export const settingsTr: Record<keyof typeof settingsEn, string> = {
  'settings.title': 'Ayarlar',
  'settings.menu_current': 'Ayarlar: {page}',
};
