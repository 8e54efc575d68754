// A secret shown once, with a copy button and the warning that it will not be shown again.
import { useState } from 'preact/hooks';
import { t } from '../i18n';

export function SecretOnce(props: { label: string; value: string }) {
  return (
    <div class="notice" role="status">
      <p style={{ margin: '0 0 var(--space-2)' }}>
        <strong>{props.label}</strong> {t('secret.once')}
      </p>
      <CopyField label={props.label} value={props.value} />
    </div>
  );
}

/** A read-only value with a copy button (secrets, forwarding addresses, embed snippets). */
export function CopyField(props: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div style={{ display: 'flex', gap: 'var(--space-2)', margin: 'var(--space-1) 0 var(--space-2)' }}>
      <input class="input mono" readOnly value={props.value} aria-label={props.label} onFocus={(e) => e.currentTarget.select()} />
      <button
        class="btn"
        type="button"
        onClick={() => {
          void navigator.clipboard?.writeText(props.value);
          setCopied(true);
        }}
      >
        {copied ? t('secret.copied') : t('secret.copy')}
      </button>
    </div>
  );
}
