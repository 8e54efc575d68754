// Step 1, Source: which mailbox or help desk to copy from (detected from the address or picked).
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, api, errorText, must } from '../../api';
import { FormError } from '../../components/FormError';
import { Loading, useLoad } from '../../components/Loading';
import { t } from '../../i18n';
import { SignInNotConfigured } from '../MigrationSignIn';
import { type Detected, loadPresets, presetText } from '../model';
import { Stepper } from '../Stepper';

export function SourceStep() {
  const { route } = useLocation();
  const presets = useLoad(loadPresets);
  const [address, setAddress] = useState('');
  const [detected, setDetected] = useState<Detected | null>(null);
  const [provider, setProvider] = useState('');
  const [host, setHost] = useState('');
  const [port, setPort] = useState('993');
  const [tls, setTls] = useState<'tls' | 'starttls' | 'none'>('tls');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const list = presets.data ?? [];
  const chosen = list.find((p) => p.id === provider) ?? null;

  async function find(e: Event) {
    e.preventDefault();
    setError(null);
    try {
      const d = (await must(api.POST('/v1/migrations/detect', { body: { address: address.trim() } }))) as unknown as Detected;
      setDetected(d);
      setProvider(d.provider);
    } catch (err) {
      setError(errorText(err));
    }
  }
  async function create() {
    if (!chosen) return;
    setBusy(true);
    setError(null);
    try {
      const body = {
        provider: chosen.id,
        ...(address.trim() ? { source_address: address.trim() } : {}),
        ...(chosen.id === 'imap' ? { imap: { host: host.trim(), port: Number(port), tls } } : {}),
      };
      const m = await must(api.POST('/v1/migrations', { body }));
      route(`/settings/migrations/${m.id}`);
    } catch (err) {
      setError(err instanceof ApiError && err.code === 'provider_not_configured' ? t('mig.source.not_configured') : errorText(err));
    } finally {
      setBusy(false);
    }
  }
  return (
    <>
      <p>
        <a href="/settings/migrations">← {t('mig.title')}</a>
      </p>
      <h1>{t('mig.new')}</h1>
      <Stepper current="source" migration={null} />
      <p class="notice" role="note">
        {t('mig.source.nothing_read')}
      </p>
      <form class="card" onSubmit={find}>
        <h2 style={{ marginTop: 0 }}>{t('mig.step.source')}</h2>
        <div class="field">
          <label for="mig-address">{t('mig.source.address')}</label>
          <input
            id="mig-address"
            class="input"
            type="email"
            autoComplete="off"
            maxLength={320}
            value={address}
            aria-describedby="mig-address-hint"
            onInput={(e) => setAddress(e.currentTarget.value)}
          />
          <span class="hint" id="mig-address-hint">
            {t('mig.source.address_hint')}
          </span>
        </div>
        <button class="btn" type="submit" disabled={!address.trim()}>
          {t('mig.source.find')}
        </button>
        {detected && (
          <p class="notice" role="status" data-testid="detected">
            {detected.found_by === 'none'
              ? t('mig.source.found_none')
              : t(detected.found_by === 'mx' ? 'mig.source.found_mx' : 'mig.source.found_domain', { name: detected.provider_name })}
            {!detected.configured && <> {t('mig.source.not_configured')}</>}
          </p>
        )}
      </form>
      <div class="card">
        {!presets.data ? (
          <Loading error={presets.error} retry={presets.reload} />
        ) : (
          <div class="field">
            <label for="mig-provider">{t('mig.source.provider')}</label>
            <select id="mig-provider" class="select" value={provider} onChange={(e) => setProvider(e.currentTarget.value)}>
              <option value="">{t('mig.source.pick')}</option>
              {list.map((p) => (
                <option key={p.id} value={p.id}>
                  {presetText(p, 'name')}
                  {p.configured === false ? ` — ${t('mig.source.needs_setup')}` : ''}
                </option>
              ))}
            </select>
          </div>
        )}
        {chosen?.note && <p class="muted">{presetText(chosen, 'note')}</p>}
        {chosen?.kind === 'sign_in' && chosen.configured === false && <SignInNotConfigured preset={chosen} />}
        {chosen?.id === 'imap' && (
          <fieldset class="field mig-box">
            <legend>{t('mig.source.server')}</legend>
            <div class="field">
              <label for="mig-host">{t('mig.source.host')}</label>
              <input id="mig-host" class="input mono" required placeholder="imap.example.com" value={host} onInput={(e) => setHost(e.currentTarget.value)} />
            </div>
            <div class="mig-inline">
              <div class="field">
                <label for="mig-port">{t('mig.source.port')}</label>
                <input id="mig-port" class="input" type="number" min={1} max={65535} value={port} onInput={(e) => setPort(e.currentTarget.value)} />
              </div>
              <div class="field">
                <label for="mig-tls">{t('mig.source.tls')}</label>
                <select id="mig-tls" class="select" value={tls} onChange={(e) => setTls(e.currentTarget.value as typeof tls)}>
                  <option value="tls">TLS</option>
                  <option value="starttls">STARTTLS</option>
                  <option value="none">{t('mig.source.tls_none')}</option>
                </select>
              </div>
            </div>
          </fieldset>
        )}
        {chosen?.kind === 'export_file' && <p class="muted">{t('mig.source.export_hint')}</p>}
        <FormError error={error} />
        <button class="btn btn-primary" type="button" disabled={!chosen || busy || (chosen.id === 'imap' && !host.trim())} onClick={() => void create()}>
          {t('mig.source.continue')}
        </button>
      </div>
    </>
  );
}
