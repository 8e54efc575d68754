// The tracker (/a.js): pageviews, single-page-app navigation (history.pushState and popstate), custom
// events through window.svca('Name', {props}) (calls made before it loads are queued by the snippet),
// sent with sendBeacon as text/plain (no preflight). It sets no cookie and stores nothing, and stays
// silent under automation (navigator.webdriver) and on localhost. Kept under 600 bytes gzipped
// (test/analytics/tracker.test.ts measures it); the readable form is in README.md ("Web analytics").
export const TRACKER_SCRIPT =
  '(function(w,d){var n=navigator,l=location,s=d.currentScript,o=new URL(s.src).origin,m=s.getAttribute("data-domain")||l.hostname,p;' +
  'function t(e,q){if(n.webdriver||/^(localhost|127\\.|\\[::1\\]$)/.test(l.hostname))return;' +
  'var b={d:m,u:l.href,r:d.referrer||null,w:w.innerWidth};if(e){b.n=e;if(q)b.p=q}n.sendBeacon(o+"/a/e",JSON.stringify(b))}' +
  'function v(){if(p!=l.pathname){p=l.pathname;t()}}' +
  'var h=history,u=h.pushState;h.pushState=function(){u.apply(h,arguments);v()};w.addEventListener("popstate",v);' +
  'var q=w.svca&&w.svca.q;w.svca=t;if(q)for(var i=0;i<q.length;i++)t.apply(0,q[i]);v()})(window,document);\n';
