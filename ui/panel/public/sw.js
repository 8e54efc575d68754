// The panel's service worker (served at /sw.js, scope /): shows Web Push notifications and opens
// the conversation when one is clicked; with the manifest it makes the panel installable. It has no
// fetch handler on purpose: requests then never pass through it, so the "left the conversation"
// signal a closing page sends (fetch keepalive on pagehide) still arrives. It caches nothing.
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('push', (event) => {
  let data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch {
    data = { title: event.data ? event.data.text() : 'svc' };
  }
  event.waitUntil(self.registration.showNotification(data.title || 'svc', { body: data.body || '', tag: data.tag, data: { url: data.url } }));
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  // Only this server's own pages are opened.
  let target = new URL('/', self.location.origin);
  try {
    const url = new URL(event.notification.data && event.notification.data.url, self.location.origin);
    if (url.origin === self.location.origin) target = url;
  } catch {}
  event.waitUntil(
    self.clients.matchAll({ type: 'window', includeUncontrolled: true }).then((windows) => {
      for (const w of windows) {
        if (new URL(w.url).origin === self.location.origin && 'focus' in w) return w.navigate(target.href).then((x) => (x || w).focus());
      }
      return self.clients.openWindow(target.href);
    }),
  );
});
