// The files going with a message (not the pictures shown in its text), each removable: the reply
// composer's and the new-conversation dialog's.
import { t } from '../i18n';

export function FileChips<F extends { id: string; filename: string; inline?: boolean }>(props: { files: F[]; onRemove: (id: string) => void }) {
  const listed = props.files.filter((f) => !f.inline);
  if (!listed.length) return null;
  return (
    <ul role="list" class="labels" aria-label={t('composer.attachments')}>
      {listed.map((f) => (
        <li key={f.id} class="label-chip">
          {f.filename}
          <button
            type="button"
            class="btn-ghost label-remove"
            aria-label={t('composer.remove_file', { name: f.filename })}
            onClick={() => props.onRemove(f.id)}
          >
            ×
          </button>
        </li>
      ))}
    </ul>
  );
}
