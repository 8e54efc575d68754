// Settings › Saved replies: the strings in Turkish, with the same keys as en.ts.
import type { savedRepliesEn } from './en';

export const savedRepliesTr: Record<keyof typeof savedRepliesEn, string> = {
  'replies.lead': 'Hazır yanıtlar yazma alanına eklenir: # yazıp adından ya da metninden birkaç harf girin. Yer tutucular konuşmaya göre doldurulur.',
  'replies.placeholders': 'Yer tutucular',
  'replies.placeholders_hint':
    'Hazır yanıtlarda ve imzalarda kullanılabilir. Dikey çizgiden sonraki yedek değer eksik bir değerin yerine geçer: {{contact.first_name|dostum}}. Yedek değer yoksa eksik kişi adı “there” olur, diğerleri boş kalır.',
  'replies.title': 'Hazır yanıtlar',
  'replies.table': 'Ada göre hazır yanıtlar',
  'replies.new': 'Yeni hazır yanıt',
  'replies.edit_title': '#{name} düzenleniyor',
  'replies.name': 'Ad',
  'replies.name_hint': 'Bulmak için # işaretinden sonra yazdığınız ad. En çok 64 karakter.',
  'replies.body': 'Metin',
  'replies.body_placeholder': 'Yanıtı yazın. Araç çubuğuyla ya da Markdown ile biçimlendirin: **kalın**, - liste, > alıntı.',
  'signature.placeholder': 'Adınız, göreviniz, bir bağlantı…',
  'replies.scope': 'Kimler kullanabilir',
  'replies.workspace': 'Herkes',
  'replies.personal_long': 'Yalnızca ben (kişisel)',
  'replies.workspace_long': 'Çalışma alanındaki herkes',
  'replies.workspace_managers': 'Herkes için hazır yanıtı yalnızca sahipler ve yöneticiler kaydedebilir.',
  'replies.empty': 'Henüz hazır yanıt yok.',
  'replies.actions': 'İşlemler',
  'replies.edit': 'Düzenle',
  'replies.edit_named': '#{name} düzenle',
  'replies.delete': 'Sil',
  'replies.delete_named': '#{name} sil',
  'replies.delete_confirm': '#{name} hazır yanıtı silinsin mi? Artık kimse ekleyemez.',
  'signature.mine': 'İmzam',
  'signature.inbox': 'Gelen kutusu imzası',
  'signature.text': 'İmza',
  'signature.mine_hint':
    'Bu çalışma alanındaki e-posta yanıtlarınızın altına, gelen kutusu imzasından önce eklenir. Notlara ve sohbet yanıtlarına eklenmez. İmza istemiyorsanız boş bırakın.',
  'signature.inbox_hint': 'Bu gelen kutusundan giden her e-posta yanıtının altına, üyenin kendi imzasından sonra eklenir. İmza istemiyorsanız boş bırakın.',
};
