// The export-file upload of a migration: the file is cut into parts of at most 8 MiB (the server's
// max_part_bytes), each sent with its SHA-256 computed here (crypto.subtle). Parts the server holds
// already (GET …/upload) with the same size and checksum are not sent again, so a cut upload
// resumes after a reload once the same file is chosen again. Once every part is sent, `complete`
// answers at once and the server checks and reads the file in the background: its progress comes
// as migration.progress events (and GET …/upload after a reload), and a refused file's cause is
// shown; the migration is connected once the file is read.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, errorText, must, type Schemas } from '../api';
import { FormError } from '../components/FormError';
import type { MessageKey } from '../i18n';
import { t } from '../i18n';
import { onEvent } from '../realtime';
import { workspaceId } from '../state';

type Upload = Schemas['MigrationUpload'];
type Processing = Schemas['MigrationUploadProcessing'];
type Migration = Schemas['Migration'];

const REASONS = new Set([
  'sha256_mismatch',
  'not_an_export',
  'damaged',
  'unsafe_name',
  'too_many_entries',
  'too_large',
  'compression_ratio',
  'encrypted',
  'unsupported',
  'empty',
  'unreadable',
]);

function reasonText(reason: string): string {
  return t((REASONS.has(reason) ? `mig.upload.reason.${reason}` : 'mig.upload.reason.unreadable') as MessageKey);
}

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
  const [phase, setPhase] = useState<'idle' | 'hashing' | 'sending' | 'processing' | 'done'>('idle');
  const [error, setError] = useState<string | null>(null);
  const [readFile, setReadFile] = useState<Upload['file']>(null);
  const [processing, setProcessing] = useState<Processing | null>(null);

  const connected = async () => {
    setPhase('done');
    const m = await must(api.GET('/v1/migrations/{migrationId}', { params: { path } }));
    props.onConnected(m as Migration);
  };
  /** What the server says of the processing after complete (an answer, an event or a reload). */
  const follow = (p: Processing | null) => {
    setProcessing(p);
    if (p?.state === 'processing') setPhase('processing');
    else if (p?.state === 'failed') setPhase('idle');
  };
  const loadHeld = async () => {
    try {
      const u = (await must(api.GET('/v1/migrations/{migrationId}/upload', { params: { path } }))) as Upload;
      setHeld(u);
      follow(u.processing);
      if (u.state === 'read') {
        setReadFile(u.file);
        void connected();
      }
      return u;
    } catch (err) {
      setError(errorText(err));
      return null;
    }
  };
  useEffect(() => {
    void loadHeld();
    const off = onEvent((ev) => {
      const data = ev.data as { migration_id?: string; upload?: Processing };
      if (ev.type !== 'migration.progress' || data.migration_id !== props.migrationId || !data.upload) return;
      follow(data.upload);
      // Read: the file's summary and the connected migration come from the server.
      if (data.upload.state === 'read') void loadHeld();
    });
    return off;
  }, [props.migrationId]);

  async function upload(chosen: File) {
    setError(null);
    setProcessing(null);
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
      setPhase('processing');
      const answer = await must(api.POST('/v1/migrations/{migrationId}/upload/complete', { params: { path }, body: { parts } }));
      setHeld(answer.upload as Upload);
      follow(answer.upload.processing);
      // Processed already (a small file, or an event came first): read where it ended.
      if (answer.upload.state !== 'processing') void loadHeld();
    } catch (err) {
      setPhase('idle');
      setError(t('mig.upload.cut', { error: errorText(err) }));
      void loadHeld();
    }
  }

  const total = file?.size ?? 0;
  const heldBytes = held?.total_bytes ?? 0;
  const busy = phase === 'hashing' || phase === 'sending' || phase === 'processing';
  const percent = total > 0 ? Math.floor((sent * 100) / total) : 0;
  const failed = processing?.state === 'failed' ? processing.error : null;
  return (
    <section class="card" aria-labelledby="mig-upload-title">
      <h2 id="mig-upload-title" style={{ marginTop: 0 }}>
        {t('mig.upload.title')}
      </h2>
      <p>{t('mig.upload.lead')}</p>
      {held && held.data.length > 0 && !file && !held.file && phase !== 'processing' && !failed && (
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
      {file && phase !== 'processing' && (
        <div class="mig-progress-block">
          <progress class="mig-progress" max={100} value={percent} aria-label={t('mig.upload.progress_label')} />
          <p class="muted" aria-live="polite">
            {phase === 'done' ? t('mig.upload.done') : t('mig.upload.progress', { sent: formatBytes(sent), total: formatBytes(total), percent })}
          </p>
        </div>
      )}
      {phase === 'processing' && (
        <div class="mig-progress-block" data-testid="upload-processing" data-phase={processing?.phase ?? 'verifying'}>
          <progress class="mig-progress" max={100} value={processing?.percent ?? 0} aria-label={t('mig.upload.processing_label')} />
          <p class="muted" aria-live="polite">
            {!processing
              ? t('mig.upload.reading')
              : processing.phase === 'reading'
                ? t('mig.upload.reading_progress', { messages: processing.messages, percent: processing.percent })
                : t('mig.upload.verifying', {
                    done: formatBytes(processing.done_bytes),
                    total: formatBytes(processing.total_bytes),
                    percent: processing.percent,
                  })}
          </p>
          <p class="hint">{t('mig.upload.processing_note')}</p>
        </div>
      )}
      {failed && (
        <div class="error-text" role="alert" data-testid="upload-failed" data-reason={failed.reason}>
          <p>{t('mig.upload.failed', { reason: reasonText(failed.reason) })}</p>
          <p>{t('mig.upload.failed_detail', { message: failed.message })}</p>
          <p>{t(held && held.data.length > 0 ? 'mig.upload.failed_parts_kept' : 'mig.upload.failed_again')}</p>
        </div>
      )}
      <FormError error={error} />
      {readFile && (
        <p class="notice" role="status">
          {t('mig.upload.read', { messages: readFile.messages, folders: readFile.folders.length })}
        </p>
      )}
    </section>
  );
}
