// Notifications in the panel: realtime `notification` events become a toast and an entry under the
// bell (with the unread count), and My account has the choices per trigger and channel plus the
// button that subscribes this browser to Web Push (through the service worker /sw.js).
import { signal } from '@preact/signals';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, errorText, must } from '../api';
import type { MessageKey } from '../i18n';
import { t } from '../i18n';
import { onEvent } from '../realtime';
import { toast } from '../state';

interface Shown {
  id: string;
  trigger: string;
  conversation_id: string;
  title: string;
  body: string;
  created_at: string;
}

const received = signal<Shown[]>([]);
const unread = signal(0);

/** Mounted once: turns the member's notification events into a toast and a bell entry. */
export function NotificationListener() {
  useEffect(
    () =>
      onEvent((ev) => {
        if (ev.type !== 'notification') return;
        const n = ev.data.notification as Shown;
        if (received.value.some((x) => x.id === n.id)) return;
        received.value = [n, ...received.value].slice(0, 30);
        unread.value += 1;
        toast(n.title);
      }),
    [],
  );
  return null;
}

export function NotificationBell() {
  const [open, setOpen] = useState(false);
  const toggle = () => {
    setOpen(!open);
    unread.value = 0;
  };
  return (
    <div class="notif-bell">
      <button class="btn" type="button" aria-expanded={open} aria-controls="notif-list" onClick={toggle}>
        {t('notif.bell')}
        {unread.value > 0 && (
          <span class="badge notif-count">
            {unread.value}
            <span class="visually-hidden"> {t('notif.unread')}</span>
          </span>
        )}
      </button>
      {open && (
        <ul id="notif-list" class="notif-list card" role="list">
          {received.value.length === 0 && <li class="muted">{t('notif.none')}</li>}
          {received.value.map((n) => (
            <li key={n.id}>
              <a href={`/conversations/${n.conversation_id}`} onClick={() => setOpen(false)}>
                {n.title}
              </a>
              {n.body && <div class="muted">{n.body}</div>}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

const TRIGGERS = ['new_conversation', 'assigned', 'customer_reply', 'mention'] as const;
const CHANNELS = ['realtime', 'push', 'email'] as const;
type Trigger = (typeof TRIGGERS)[number];
type Channel = (typeof CHANNELS)[number];
type Prefs = Record<Trigger, Record<Channel, boolean>>;

function base64UrlToBytes(text: string): Uint8Array<ArrayBuffer> {
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4);
  const raw = atob(b64);
  const out = new Uint8Array(new ArrayBuffer(raw.length));
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

async function subscribeThisBrowser(): Promise<void> {
  const key = await must(api.GET('/v1/push/key'));
  if (!key.enabled || !key.vapid_public_key) throw new Error(t('notif.push_off'));
  if (!('serviceWorker' in navigator) || !('PushManager' in window)) throw new Error(t('notif.push_unsupported'));
  if ((await Notification.requestPermission()) !== 'granted') throw new Error(t('notif.push_denied'));
  const registration = await navigator.serviceWorker.register('/sw.js');
  await navigator.serviceWorker.ready;
  const sub = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: base64UrlToBytes(key.vapid_public_key) });
  const json = sub.toJSON();
  await must(
    api.POST('/v1/me/push-subscriptions', {
      body: {
        endpoint: sub.endpoint,
        keys: { p256dh: json.keys!.p256dh, auth: json.keys!.auth },
        expiration_time: sub.expirationTime,
        user_agent: navigator.userAgent.slice(0, 300),
      },
    }),
  );
}

export function NotificationSettings() {
  const [prefs, setPrefs] = useState<Prefs | null>(null);
  const [available, setAvailable] = useState<Record<Channel, boolean>>({ realtime: true, push: false, email: false });
  const fail = (err: unknown) => toast(t('action.failed', { error: err instanceof ApiError ? err.message : errorText(err) }));
  useEffect(() => {
    must(api.GET('/v1/me/notification-preferences')).then((r) => {
      setPrefs(r.preferences as Prefs);
      setAvailable(r.available);
    }, fail);
  }, []);
  const change = (trigger: Trigger, channel: Channel, value: boolean) =>
    must(api.PATCH('/v1/me/notification-preferences', { body: { [trigger]: { [channel]: value } } })).then((r) => setPrefs(r.preferences as Prefs), fail);
  return (
    <section class="card" aria-labelledby="notif-title">
      <h2 id="notif-title" style={{ marginTop: 0 }}>
        {t('notif.title')}
      </h2>
      <p class="muted">{t('notif.lead')}</p>
      {prefs && (
        <div class="table-wrap">
          <table class="table">
            <thead>
              <tr>
                <th scope="col">{t('notif.trigger')}</th>
                {CHANNELS.map((c) => (
                  <th scope="col" key={c}>
                    {t(`notif.channel.${c}` as MessageKey)}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {TRIGGERS.map((trigger) => (
                <tr key={trigger}>
                  <th scope="row">{t(`notif.trigger.${trigger}` as MessageKey)}</th>
                  {CHANNELS.map((channel) => (
                    <td key={channel}>
                      <input
                        type="checkbox"
                        aria-label={`${t(`notif.trigger.${trigger}` as MessageKey)}: ${t(`notif.channel.${channel}` as MessageKey)}`}
                        checked={prefs[trigger][channel]}
                        disabled={!available[channel]}
                        onChange={(e) => void change(trigger, channel, e.currentTarget.checked)}
                      />
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {available.push && (
        <button class="btn" type="button" onClick={() => void subscribeThisBrowser().then(() => toast(t('notif.push_on')), fail)}>
          {t('notif.push_subscribe')}
        </button>
      )}
    </section>
  );
}
