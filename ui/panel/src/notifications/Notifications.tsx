// Notifications in the panel: the bell shows the member's notification inbox, kept on the server
// (GET /v1/notifications), so the unread count survives a reload and is the same on every device.
// Realtime `notification` events add an entry (and a toast); `notification.read` events (the member
// read some on this or another device) set the count. My account has the choices per trigger and
// channel plus the button that subscribes this browser to Web Push (through the service worker /sw.js).
import { signal } from '@preact/signals';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, errorText, must, type Schemas } from '../api';
import type { MessageKey } from '../i18n';
import { t } from '../i18n';
import { onEvent, onReset } from '../realtime';
import { connection, toast, workspaceId } from '../state';

type Shown = Schemas['Notification'];

const received = signal<Shown[]>([]);
const unread = signal(0);
/** Entries shown under the bell (the newest). */
const SHOWN = 30;

async function loadNotifications(): Promise<void> {
  const page = await must(api.GET('/v1/notifications', { params: { query: { limit: SHOWN } } }));
  received.value = page.data;
  unread.value = page.unread_count;
}

function markShownRead(ids: string[] | 'all', at: string) {
  received.value = received.value.map((n) => (n.read_at === null && (ids === 'all' || ids.includes(n.id)) ? { ...n, read_at: at } : n));
}

/** Mounted once: loads the inbox for the workspace, and keeps it current from the member's events. */
export function NotificationListener() {
  const ws = workspaceId.value;
  const live = connection.value === 'live';
  useEffect(() => {
    if (!ws) {
      received.value = [];
      unread.value = 0;
      return;
    }
    // Loaded again after a reconnect: what was told meanwhile may be beyond the resumed stream.
    if (live) void loadNotifications().catch(() => {});
  }, [ws, live]);
  useEffect(() => onReset(() => void loadNotifications().catch(() => {})), []);
  useEffect(
    () =>
      onEvent((ev) => {
        if (ev.type === 'notification.read') {
          markShownRead(ev.data.all ? 'all' : (ev.data.notification_ids as string[]), ev.timestamp);
          unread.value = ev.data.unread_count as number;
          return;
        }
        if (ev.type !== 'notification') return;
        const told = ev.data.notification as Shown;
        const n = { ...told, read_at: told.read_at ?? null };
        if (received.value.some((x) => x.id === n.id)) return;
        received.value = [n, ...received.value].slice(0, SHOWN);
        unread.value += 1;
        toast(n.title);
      }),
    [],
  );
  return null;
}

export function NotificationBell() {
  const [open, setOpen] = useState(false);
  const fail = (err: unknown) => toast(t('action.failed', { error: errorText(err) }));
  const read = (n: Shown) => {
    setOpen(false);
    if (n.read_at !== null) return;
    void must(api.POST('/v1/notifications/{id}/read', { params: { path: { id: n.id } } })).then((r) => {
      markShownRead([n.id], r.notification.read_at ?? new Date().toISOString());
      unread.value = r.unread_count;
    }, fail);
  };
  const readAll = () =>
    void must(api.POST('/v1/notifications/read')).then((r) => {
      markShownRead('all', new Date().toISOString());
      unread.value = r.unread_count;
    }, fail);
  return (
    <div class="notif-bell">
      <button class="btn" type="button" aria-expanded={open} aria-controls="notif-list" onClick={() => setOpen(!open)}>
        {t('notif.bell')}
        {unread.value > 0 && (
          <span class="badge notif-count">
            {unread.value}
            <span class="visually-hidden"> {t('notif.unread')}</span>
          </span>
        )}
      </button>
      {open && (
        <div id="notif-list" class="notif-list card">
          {unread.value > 0 && (
            <button class="btn btn-ghost notif-read-all" type="button" onClick={readAll}>
              {t('notif.mark_all_read')}
            </button>
          )}
          <ul role="list">
            {received.value.length === 0 && <li class="muted">{t('notif.none')}</li>}
            {received.value.map((n) => (
              <li key={n.id} class={n.read_at === null ? 'notif-unread' : undefined}>
                <a href={n.conversation_id ? `/conversations/${n.conversation_id}` : `/settings/inboxes/${n.inbox_id}`} onClick={() => read(n)}>
                  {n.title}
                  {n.read_at === null && <span class="visually-hidden"> ({t('notif.unread')})</span>}
                </a>
                {n.body && <div class="muted">{n.body}</div>}
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}

const TRIGGERS = [
  'new_conversation',
  'assigned',
  'customer_reply',
  'mention',
  'snooze_ended',
  'sla_warning',
  'sla_breached',
  'reply_held',
  'sign_in_required',
] as const;
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
                        aria-describedby={available[channel] ? undefined : `notif-off-${channel}`}
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
      {(['push', 'email'] as const)
        .filter((c) => prefs && !available[c])
        .map((c) => (
          <p key={c} id={`notif-off-${c}`} class="muted notif-off">
            {t(c === 'push' ? 'notif.push_no_keys' : 'notif.email_no_smtp')}
          </p>
        ))}
      {available.push && (
        <button class="btn" type="button" onClick={() => void subscribeThisBrowser().then(() => toast(t('notif.push_on')), fail)}>
          {t('notif.push_subscribe')}
        </button>
      )}
    </section>
  );
}
