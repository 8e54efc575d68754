// An anonymous chat visitor's context: where they chat from, the name they get until they give
// one, and what the team sees of it on the contact.

/** Where an anonymous visitor chats from, kept on the new contact's attributes for the team. */
export interface VisitorContext {
  page?: string;
  browser?: string | null;
  country?: string | null;
  city?: string | null;
}

/**
 * What an anonymous visitor is called until they give a name: "Visitor from Istanbul, Türkiye" (the
 * inbox's language; the place as the location database knows it), else "Visitor".
 */
export function visitorName(v: VisitorContext | undefined, locale: string): string {
  const tr = locale.toLowerCase().startsWith('tr');
  let country: string | undefined;
  try {
    country = v?.country ? new Intl.DisplayNames([tr ? 'tr' : 'en'], { type: 'region' }).of(v.country.toUpperCase()) : undefined;
  } catch {
    country = undefined;
  }
  const place = [v?.city, country].filter(Boolean).join(', ');
  if (!place) return tr ? 'Ziyaretçi' : 'Visitor';
  return tr ? `${place} ziyaretçisi` : `Visitor from ${place}`;
}

/** The attributes the panel reads to show and name a visitor ("Visitor from Türkiye"): only what is known. */
export function visitorAttributes(v: VisitorContext | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (v?.page) out.visitor_page = v.page;
  if (v?.browser) out.visitor_browser = v.browser;
  if (v?.country) out.visitor_country = v.country;
  if (v?.city) out.visitor_city = v.city;
  return out;
}
