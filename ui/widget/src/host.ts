// What the launcher (main.ts) hands the chat panel (app.tsx) when it opens, and the style sheets both
// put in the shadow root.
import type { VisitorMessage, WidgetClient, WidgetConfig } from './client';

export interface Widget {
  client: WidgetClient;
  config: WidgetConfig;
  root: ShadowRoot;
  launcher: HTMLButtonElement;
  close(): void;
  emit(type: 'message', message: VisitorMessage): void;
}

export function sheet(css: string): CSSStyleSheet {
  // Constructable sheets are CSSOM, not inline style: a host CSP without 'unsafe-inline' allows them.
  const s = new CSSStyleSheet();
  s.replaceSync(css);
  return s;
}
