// The panel's service worker (served at /sw.js, scope /): shows Web Push notifications and opens
// the conversation when one is clicked; makes the panel installable (a fetch handler: a page opened
// while offline gets a short notice instead of the browser's error). It caches nothing.
const OFFLINE_PAGE = `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark"><title>svc</title></head>
<body style="font:14px/1.45 system-ui,sans-serif;margin:0;display:grid;place-items:center;min-height:100vh;text-align:center">
<main><h1 style="font-size:18px">You are offline</h1><p>svc will be back when the connection is.</p><p lang="tr">Çevrimdışısınız: bağlantı gelince svc geri gelir.</p></main></body></html>`;

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

// Only page loads are answered here; everything else goes to the network as if there were no worker.
self.addEventListener('fetch', (event) => {
  if (event.request.mode !== 'navigate') return;
  event.respondWith(
    fetch(event.request).catch(
      () => new Response(OFFLINE_PAGE, { status: 503, headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' } }),
    ),
  );
});
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
