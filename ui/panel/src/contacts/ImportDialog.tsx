// CSV import in three steps (UI.md): pick a file (uploaded for a preview), map its columns with the
// first rows in view, then the import runs on the server while a progress bar follows it; the
// result lists the rows that were not imported, with their row numbers.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must, type Schemas } from '../api';
import { Dialog } from '../components/Dialog';
import { FormError } from '../components/FormError';
import { t } from '../i18n';

type Import = Schemas['ContactImport'];
type Column = Schemas['ContactImportColumn'];

function encode(c: Column): string {
  return c.to === 'external_id' ? `external_id:${c.inbox_id}` : c.to === 'attribute' ? 'attribute' : c.to;
}

export function ImportDialog(props: { onClose: () => void; onDone: () => void }) {
  const [imp, setImp] = useState<Import | null>(null);
  const [mapping, setMapping] = useState<Column[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const inboxes = useInboxes();

  async function upload(file: File) {
    setBusy(true);
    setError(null);
    try {
      // The file goes as it is (the typed client adds the workspace header).
      const body = await must(
        api.POST('/v1/contacts/import', {
          params: { query: { filename: file.name } },
          body: file as never,
          bodySerializer: (b: unknown) => b as BodyInit,
          headers: { 'content-type': 'text/csv' },
        }),
      );
      setImp(body);
      setMapping(body.suggested_mapping ?? []);
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  }

  async function start() {
    if (!imp) return;
    setBusy(true);
    setError(null);
    try {
      setImp(await must(api.POST('/v1/contact-imports/{importId}/start', { params: { path: { importId: imp.id } }, body: { mapping: mapping as never } })));
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  }

  // While it runs, the progress is read every second.
  useEffect(() => {
    if (!imp || (imp.state !== 'queued' && imp.state !== 'running')) {
      if (imp?.state === 'done') props.onDone();
      return;
    }
    const timer = setTimeout(async () => {
      try {
        setImp(await must(api.GET('/v1/contact-imports/{importId}', { params: { path: { importId: imp.id } } })));
      } catch (e) {
        setError(errorText(e));
      }
    }, 1000);
    return () => clearTimeout(timer);
  }, [imp]);

  const setColumn = (i: number, value: string) => {
    const next = [...mapping];
    const header = imp?.columns[i] ?? '';
    next[i] = value.startsWith('external_id:')
      ? { to: 'external_id', inbox_id: value.slice('external_id:'.length) }
      : value === 'attribute'
        ? { to: 'attribute', key: header.replace(/^attr:/i, '') || `column_${i + 1}` }
        : { to: value as Column['to'] };
    setMapping(next);
  };

  return (
    <Dialog title={t('import.title')} onClose={props.onClose}>
      <div class="contact-import">
        {!imp && (
          <div class="field">
            <label for="import-file">{t('import.file')}</label>
            <input
              id="import-file"
              class="input"
              type="file"
              accept=".csv,text/csv"
              disabled={busy}
              onChange={(e) => {
                const f = e.currentTarget.files?.[0];
                if (f) void upload(f);
              }}
            />
            <p class="muted">{t('import.file_hint')}</p>
          </div>
        )}
        {imp?.state === 'uploaded' && (
          <>
            <p class="muted">{t('import.preview', { rows: imp.rows_total, encoding: imp.encoding })}</p>
            <div class="import-preview" role="region" aria-label={t('import.mapping')} tabIndex={0}>
              <table class="data-table">
                <caption>{t('import.mapping')}</caption>
                <thead>
                  <tr>
                    {imp.columns.map((c, i) => (
                      <th key={i} scope="col">
                        <label for={`import-col-${i}`}>{c}</label>
                        <select
                          id={`import-col-${i}`}
                          class="select"
                          value={mapping[i] ? encode(mapping[i]) : 'ignore'}
                          onChange={(e) => setColumn(i, e.currentTarget.value)}
                        >
                          <option value="ignore">{t('import.ignore')}</option>
                          <option value="name">{t('import.to_name')}</option>
                          <option value="email">{t('import.to_email')}</option>
                          <option value="attribute">{t('import.to_attribute')}</option>
                          {inboxes.map((inb) => (
                            <option key={inb.id} value={`external_id:${inb.id}`}>
                              {t('import.to_external_id', { inbox: inb.name })}
                            </option>
                          ))}
                        </select>
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {(imp.sample ?? []).map((row, r) => (
                    <tr key={r}>
                      {imp.columns.map((_, i) => (
                        <td key={i}>{row[i] ?? ''}</td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <button class="btn btn-primary" type="button" disabled={busy} onClick={() => void start()}>
              {t('import.start', { rows: imp.rows_total })}
            </button>
          </>
        )}
        {imp && imp.state !== 'uploaded' && (
          <>
            <label for="import-progress">{t(imp.state === 'done' ? 'import.done' : imp.state === 'failed' ? 'import.failed' : 'import.running')}</label>
            <progress id="import-progress" max={100} value={imp.percent}>
              {imp.percent}%
            </progress>
            <p role="status">
              {t('import.counts', { done: imp.rows_done, total: imp.rows_total, created: imp.created, updated: imp.updated, errors: imp.error_count })}
            </p>
            {imp.failure && <p class="form-error">{imp.failure}</p>}
            {imp.errors.length > 0 && (
              <details open>
                <summary>{t('import.errors', { count: imp.error_count })}</summary>
                <ul class="import-errors">
                  {imp.errors.map((e) => (
                    <li key={e.row}>{t('import.error_row', { row: e.row, reason: e.reason })}</li>
                  ))}
                </ul>
              </details>
            )}
            {(imp.state === 'done' || imp.state === 'failed') && (
              <button class="btn" type="button" onClick={props.onClose}>
                {t('import.close')}
              </button>
            )}
          </>
        )}
        <FormError error={error} />
      </div>
    </Dialog>
  );
}

function useInboxes(): { id: string; name: string }[] {
  const [list, setList] = useState<{ id: string; name: string }[]>([]);
  useEffect(() => {
    void must(api.GET('/v1/inboxes'))
      .then((p) => setList(p.data.map((i) => ({ id: i.id, name: i.name }))))
      .catch(() => setList([]));
  }, []);
  return list;
}
