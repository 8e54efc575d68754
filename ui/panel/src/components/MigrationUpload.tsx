// The export-file upload of a migration: the file is cut into parts of at most 8 MiB (the server's
// max_part_bytes), each sent with its SHA-256 computed here (crypto.subtle). Parts the server holds
// already (GET …/upload) with the same size and checksum are not sent again, so a cut upload
// resumes after a reload once the same file is chosen again.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, errorText, must, type Schemas } from '../api';
import { t } from '../i18n';
import { workspaceId } from '../state';

type Upload = Schemas['MigrationUpload'];
type Migration = Schemas['Migration'];

async function sha256Hex(data: ArrayBuffer): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', data);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 * 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${(n / 1024 / 1024 / 1024).toFixed(2)} GB`;
}

export function MigrationUpload(props: { migrationId: string; onConnected: (m: Migration) => void }) {
  const path = { migrationId: props.migrationId };
  const [held, setHeld] = useState<Upload | null>(null);
  const [file, setFile] = useState<File | null>(null);
  const [sent, setSent] = useState(0);
  const [phase, setPhase] = useState<'idle' | 'hashing' | 'sending' | 'reading' | 'done'>('idle');
  const [error, setError] = useState<string | null>(null);
  const [readFile, setReadFile] = useState<Upload['file']>(null);

  const loadHeld = async () => {
    try {
      const u = await must(api.GET('/v1/migrations/{migrationId}/upload', { params: { path } }));
      setHeld(u as Upload);
      return u as Upload;
    } catch (err) {
      setError(errorText(err));
      return null;
    }
  };
  useEffect(() => {
    void loadHeld();
  }, [props.migrationId]);

  async function upload(chosen: File) {
    setError(null);
    setFile(chosen);
    const state = (await loadHeld()) ?? held;
    if (!state) return;
    const partBytes = state.max_part_bytes;
    const parts = Math.max(1, Math.ceil(chosen.size / partBytes));
    const byNumber = new Map(state.data.map((p) => [p.part, p]));
    let done = 0;
    setSent(0);
    try {
      for (let part = 1; part <= parts; part++) {
        const blob = chosen.slice((part - 1) * partBytes, Math.min(chosen.size, part * partBytes));
        setPhase('hashing');
        const bytes = await blob.arrayBuffer();
        const sha = await sha256Hex(bytes);
        const have = byNumber.get(part);
        if (!have || have.size !== blob.size || have.sha256 !== sha) {
          setPhase('sending');
          const headers: Record<string, string> = { 'content-type': 'application/octet-stream', [state.sha256_header]: sha };
          if (workspaceId.value) headers['Svc-Workspace'] = workspaceId.value;
          let r: Response;
          try {
            r = await fetch(`/v1/migrations/${encodeURIComponent(props.migrationId)}/upload/parts/${part}`, {
              method: 'POST',
              credentials: 'same-origin',
              headers,
              body: bytes,
            });
          } catch (e) {
            throw new ApiError(0, 'network', errorText(e));
          }
          if (!r.ok) {
            const body = (await r.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
            throw new ApiError(r.status, body?.error?.code ?? 'error', body?.error?.message ?? r.statusText);
          }
        }
        done += blob.size;
        setSent(done);
      }
      setPhase('reading');
      const answer = await must(api.POST('/v1/migrations/{migrationId}/upload/complete', { params: { path }, body: { parts } }));
      setReadFile(answer.file);
      setPhase('done');
      props.onConnected(answer.migration as Migration);
    } catch (err) {
      setPhase('idle');
      setError(t('mig.upload.cut', { error: errorText(err) }));
      void loadHeld();
    }
  }

  const total = file?.size ?? 0;
  const heldBytes = held?.total_bytes ?? 0;
  const busy = phase === 'hashing' || phase === 'sending' || phase === 'reading';
  const percent = total > 0 ? Math.floor((sent * 100) / total) : 0;
  return (
    <section class="card" aria-labelledby="mig-upload-title">
      <h2 id="mig-upload-title" style={{ marginTop: 0 }}>
        {t('mig.upload.title')}
      </h2>
      <p>{t('mig.upload.lead')}</p>
      {held && held.data.length > 0 && !file && !held.file && (
        <p class="notice" role="status" data-testid="upload-resume">
          {t('mig.upload.resume', { parts: held.data.length, size: formatBytes(heldBytes) })}
        </p>
      )}
      <div class="field">
        <label for="mig-file">{t('mig.upload.choose')}</label>
        <input
          id="mig-file"
          class="input"
          type="file"
          accept=".zip,.mbox,.mbx,application/zip,application/mbox"
          disabled={busy}
          onChange={(e) => {
            const f = e.currentTarget.files?.[0];
            if (f) void upload(f);
          }}
        />
        <span class="hint">{t('mig.upload.hint')}</span>
      </div>
      {file && (
        <div class="mig-progress-block">
          <progress class="mig-progress" max={100} value={percent} aria-label={t('mig.upload.progress_label')} />
          <p class="muted" aria-live="polite">
            {phase === 'reading'
              ? t('mig.upload.reading')
              : phase === 'done'
                ? t('mig.upload.done')
                : t('mig.upload.progress', { sent: formatBytes(sent), total: formatBytes(total), percent })}
          </p>
        </div>
      )}
      {error && (
        <p class="error-text" role="alert">
          {error}
        </p>
      )}
      {readFile && (
        <p class="notice" role="status">
          {t('mig.upload.read', { messages: readFile.messages, folders: readFile.folders.length })}
        </p>
      )}
    </section>
  );
}
