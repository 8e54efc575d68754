// Ingestion of one tracker event (POST /a/e): the rules that drop it (with the reason the answer's
// header names and the metric counts) and the reduction of what is kept: no IP address, no user
// agent string, no query string but utm_*, ref and source.
import { z } from 'zod';
import type { Ctx } from '../context.js';
import { MINUTE } from '../platform/clock.js';
import { invalid } from '../platform/errors.js';
import type { GeoDatabase } from './geoip.js';
import { type PropertyRow, propertyForDomain } from './properties.js';
import { isBotAgent, reduceAgent, type SaltCache, visitorHash } from './visitor.js';
import { CONVERSATION_EVENTS, type EventWriter, type PendingEvent } from './writer.js';

export const MAX_BODY_BYTES = 2048;
export const MAX_NAME_CHARS = 64;
export const MAX_PROPS = 30;
export const MAX_PROP_KEY_CHARS = 64;
export const MAX_PROP_VALUE_CHARS = 256;
/** Events one address may send per minute (per process); more are dropped with `rate`. */
export const EVENTS_PER_ADDRESS_PER_MINUTE = 120;

/** `backlog`: more events wait to be written than the buffer holds (the database is behind). */
export type DropReason = 'bot' | 'quota' | 'origin' | 'rate' | 'invalid' | 'backlog';
export const DROP_REASONS: readonly DropReason[] = ['bot', 'quota', 'origin', 'rate', 'invalid', 'backlog'];

const propValue = z.union([z.string().max(MAX_PROP_VALUE_CHARS), z.number().finite(), z.boolean()]);
const Body = z
  .object({
    d: z.string().min(1).max(253),
    u: z.string().min(1).max(MAX_BODY_BYTES),
    r: z.string().max(MAX_BODY_BYTES).nullable().optional(),
    n: z.string().min(1).max(MAX_NAME_CHARS).optional(),
    p: z
      .record(z.string().min(1).max(MAX_PROP_KEY_CHARS), propValue)
      .refine((p) => Object.keys(p).length <= MAX_PROPS, `at most ${MAX_PROPS} props`)
      .optional(),
    w: z.number().int().min(0).max(100_000).optional(),
  })
  .strict();

export interface IncomingEvent {
  body: string;
  origin: string | undefined;
  userAgent: string | undefined;
  /** The client address (used for the visitor hash and the rate limit only; never stored). */
  address: string;
  gpc: boolean;
}

type Props = Record<string, string | number | boolean>;

interface Recorded {
  name: string;
  referrer: string | null | undefined;
  props: Props | undefined;
  screenWidth: number | undefined;
  address: string;
  userAgent: string;
  gpc: boolean;
}

export interface ServerEvent {
  name: string;
  url: string;
  referrer?: string | null;
  props?: Props;
  /** The visitor's address and user agent (both, for a visitor hash; never stored). */
  address?: string;
  userAgent?: string;
}

/** The body fields of an event, shared by POST /a/e and POST /v1/analytics/events. */
export const eventProps = z
  .record(z.string().min(1).max(MAX_PROP_KEY_CHARS), z.union([z.string().max(MAX_PROP_VALUE_CHARS), z.number().finite(), z.boolean()]))
  .refine((p) => Object.keys(p).length <= MAX_PROPS, `at most ${MAX_PROPS} props`);

/** What the ingestion keeps between requests: the domain → property cache, rate windows, salts. */
export class Ingestion {
  private properties = new Map<string, { row: PropertyRow | undefined; at: number }>();
  private rate = new Map<string, number>();
  private rateWindow = 0;

  constructor(
    private readonly ctx: Pick<Ctx, 'db' | 'clock' | 'config' | 'log' | 'metrics'>,
    readonly writer: EventWriter,
    private readonly salts: SaltCache,
    readonly geo: GeoDatabase,
  ) {}

  private async property(domain: string): Promise<PropertyRow | undefined> {
    const hit = this.properties.get(domain);
    if (hit && performance.now() - hit.at < 10_000) return hit.row;
    const row = await propertyForDomain(this.ctx.db, domain);
    if (this.properties.size > 10_000) this.properties.clear();
    this.properties.set(domain, { row, at: performance.now() });
    return row;
  }

  /** Forgets cached properties (after a change through this process). */
  forgetProperties(): void {
    this.properties.clear();
  }

  private overRate(address: string): boolean {
    const window = Math.floor(this.ctx.clock.now().getTime() / MINUTE);
    if (window !== this.rateWindow) {
      this.rate.clear();
      this.rateWindow = window;
    }
    const n = (this.rate.get(address) ?? 0) + 1;
    this.rate.set(address, n);
    return n > EVENTS_PER_ADDRESS_PER_MINUTE;
  }

  /** Counts an event dropped before it was read (a body over MAX_BODY_BYTES). */
  dropped(reason: DropReason): DropReason {
    this.ctx.metrics.analyticsDropped.labels(reason).inc();
    return reason;
  }

  /** Takes or drops one event; returns why it was dropped, or null when it was taken. */
  async take(input: IncomingEvent): Promise<DropReason | null> {
    const reason = await this.decide(input);
    if (reason) this.ctx.metrics.analyticsDropped.labels(reason).inc();
    return reason;
  }

  private async decide(input: IncomingEvent): Promise<DropReason | null> {
    if (Buffer.byteLength(input.body) > MAX_BODY_BYTES) return 'invalid';
    let parsed: z.infer<typeof Body>;
    try {
      const r = Body.safeParse(JSON.parse(input.body));
      if (!r.success) return 'invalid';
      parsed = r.data;
    } catch {
      return 'invalid';
    }
    let page: URL;
    try {
      page = new URL(parsed.u);
    } catch {
      return 'invalid';
    }
    if (page.protocol !== 'https:' && page.protocol !== 'http:') return 'invalid';
    if (isBotAgent(input.userAgent)) return 'bot';
    const domain = parsed.d
      .trim()
      .toLowerCase()
      .replace(/^www\./, '');
    const property = await this.property(domain);
    if (!property) return 'origin';
    if (!originMatches(input.origin, property) || !hostMatches(page.hostname, property)) return 'origin';
    if (this.overRate(input.address)) return 'rate';
    return this.record(property, page, {
      name: parsed.n ?? 'pageview',
      referrer: parsed.r,
      props: parsed.p,
      screenWidth: parsed.w,
      address: input.address,
      userAgent: input.userAgent!,
      gpc: input.gpc,
    });
  }

  /**
   * A server-side event (POST /v1/analytics/events) for a property of the caller's workspace: the
   * page must be on the property's domain (400 otherwise); without the visitor's address and user
   * agent it counts with no visitor hash, as with Sec-GPC. Returns why it was dropped, or null.
   */
  async takeFromServer(property: PropertyRow, input: ServerEvent): Promise<DropReason | null> {
    const page = new URL(input.url);
    if ((page.protocol !== 'https:' && page.protocol !== 'http:') || !hostMatches(page.hostname, property))
      throw invalid(`url must be a page of ${property.domain}${property.subdomains ? ' or its subdomains' : ''}`);
    const reason =
      input.userAgent && isBotAgent(input.userAgent)
        ? 'bot'
        : await this.record(property, page, {
            name: input.name,
            referrer: input.referrer,
            props: input.props,
            screenWidth: undefined,
            address: input.address ?? '',
            userAgent: input.userAgent ?? '',
            gpc: !input.address || !input.userAgent,
          });
    if (reason) this.ctx.metrics.analyticsDropped.labels(reason).inc();
    return reason;
  }

  private async record(property: PropertyRow, page: URL, e: Recorded): Promise<DropReason | null> {
    const name = e.name;
    if (this.writer.full && !CONVERSATION_EVENTS.has(name)) return 'backlog';
    if ((await this.writer.admit(property.workspace_id, name)) === 'quota') return 'quota';
    const now = this.ctx.clock.now();
    const { day, salt } = await this.salts.today(this.ctx);
    const agent = e.userAgent ? reduceAgent(e.userAgent, e.screenWidth) : { browser: null, os: null, device: null };
    const q = page.searchParams;
    const referrer = referrerHost(e.referrer, property);
    const place = e.address ? this.geo.lookup(e.address) : { country: null, region: null, city: null };
    const event: PendingEvent = {
      property_id: property.id,
      workspace_id: property.workspace_id,
      at: now.toISOString(),
      day,
      name,
      visitor_id: e.gpc ? null : visitorHash(salt, property.id, e.address, e.userAgent),
      path: cleanPath(page.pathname),
      referrer,
      source: text(q.get('utm_source')) ?? text(q.get('ref')) ?? text(q.get('source')) ?? referrer,
      utm_source: text(q.get('utm_source')),
      utm_medium: text(q.get('utm_medium')),
      utm_campaign: text(q.get('utm_campaign')),
      utm_content: text(q.get('utm_content')),
      utm_term: text(q.get('utm_term')),
      country: place.country,
      region: place.region,
      city: place.city,
      browser: agent.browser,
      os: agent.os,
      device: agent.device,
      props: e.props && Object.keys(e.props).length ? JSON.stringify(e.props) : null,
    };
    return this.writer.add(event) ? null : 'backlog';
  }
}

const text = (v: string | null): string | null => {
  const t = v?.trim().slice(0, 200);
  return t ? t : null;
};

function cleanPath(p: string): string {
  const path = p.length > 1 ? p.replace(/\/+$/, '') : p;
  return (path || '/').slice(0, 512);
}

export function hostMatches(host: string, property: Pick<PropertyRow, 'domain' | 'subdomains'>): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  if (h === property.domain || h === `www.${property.domain}`) return true;
  return property.subdomains === 1 && h.endsWith(`.${property.domain}`);
}

/** The page's Origin header must name the property's domain (or a subdomain when allowed). */
export function originMatches(origin: string | undefined, property: Pick<PropertyRow, 'domain' | 'subdomains'>): boolean {
  if (!origin) return false;
  try {
    const u = new URL(origin);
    return (u.protocol === 'https:' || u.protocol === 'http:') && hostMatches(u.hostname, property);
  } catch {
    return false;
  }
}

/** The referring site's host, or null for none and for the site's own pages. */
function referrerHost(raw: string | null | undefined, property: Pick<PropertyRow, 'domain' | 'subdomains'>): string | null {
  if (!raw) return null;
  try {
    const u = new URL(raw);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return null;
    if (hostMatches(u.hostname, { domain: property.domain, subdomains: 1 })) return null;
    return u.hostname
      .toLowerCase()
      .replace(/^www\./, '')
      .slice(0, 253);
  } catch {
    return null;
  }
}
