// Loading a settings page's data: a skeleton while it loads, the error with a retry when it fails.
import { useEffect, useState } from 'preact/hooks';
import { errorText } from '../api';
import { t } from '../i18n';

export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reload = () =>
    load().then(
      (d) => (setData(d), setError(null)),
      (e) => setError(errorText(e)),
    );
  useEffect(() => {
    void reload();
  }, deps);
  return { data, error, reload };
}

export function Loading(props: { error: string | null; retry: () => void }) {
  if (!props.error) return <div class="skeleton" role="status" aria-label={t('settings.loading')} style={{ width: '60%' }} />;
  return (
    <div class="empty" role="alert">
      <p>{props.error}</p>
      <button class="btn" type="button" onClick={props.retry}>
        {t('list.retry')}
      </button>
    </div>
  );
}
