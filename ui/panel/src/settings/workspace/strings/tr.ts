// Settings › Workspace: the strings in Turkish, with the same keys as en.ts.
import type { workspaceSettingsEn } from './en';

export const workspaceSettingsTr: Record<keyof typeof workspaceSettingsEn, string> = {
  'settings.not_allowed': 'Bunu yalnızca sahipler ve yöneticiler değiştirebilir.',
  'workspace.retention': 'Kapalı konuşmaları şu kadar gün sonra sil',
  'workspace.retention_hint':
    'Her şeyi saklamak için boş bırakın. Bu kadar gündür değişmeyen kapalı konuşmalar dosyalarıyla silinir; bundan eski özgün e-postalar kaldırılır (mesajlar kalır).',
  'workspace.delete': 'Çalışma alanını sil',
  'workspace.delete_lead':
    '{name} silindiği anda durur: üyeler erişimini kaybeder, adreslerine gelen e-postalar reddedilir, webhook’lar durur. Ardından tüm konuşmalar, kişiler, dosyalar, gelen kutuları ve kanallar silinir. Bu geri alınamaz.',
  'workspace.delete_confirm': 'Onaylamak için çalışma alanının adını ({name}) yazın',
  'workspace.deleted': 'Çalışma alanı siliniyor.',
};
