// Web analytics through widget.js (no second script): when the chat channel's property counts this
// page, the widget sends what /a.js would — pageviews (single-page-app navigation too), custom
// events through svc('track', name, props), and "Chat Opened" — to /a/e with sendBeacon. Like /a.js
// it sets no cookie, stores nothing, and stays silent under automation and on localhost.

/** Starts counting; returns the function that sends a custom event. */
export function startAnalytics(base: string, domain: string): (name: string, props?: Record<string, unknown>) => void {
  const l = location;
  const send = (name?: string, props?: Record<string, unknown>) => {
    if (navigator.webdriver || /^(localhost|127\.|\[::1\]$)/.test(l.hostname)) return;
    const body: Record<string, unknown> = { d: domain, u: l.href, r: document.referrer || null, w: innerWidth };
    if (name) body.n = name;
    if (props) body.p = props;
    navigator.sendBeacon(`${base}/a/e`, JSON.stringify(body));
  };
  let path: string | undefined;
  const view = () => {
    if (path !== l.pathname) {
      path = l.pathname;
      send();
    }
  };
  const push = history.pushState;
  history.pushState = function (this: History, ...args: Parameters<History['pushState']>) {
    push.apply(this, args);
    view();
  };
  addEventListener('popstate', view);
  view();
  return (name, props) => send(name, props);
}
