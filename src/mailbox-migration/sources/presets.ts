// The providers a migration can copy from (GET /v1/migrations/presets) and finding the provider of
// an address (POST /v1/migrations/detect): by the address's domain, else by the domain's MX records.
// Nothing is read from the mailbox to detect it.
import type { Config } from '../../config.js';
import type { MxLookup } from '../../context.js';
import type { ImapTlsMode } from '../../db/schema.js';

export type ProviderKind = 'imap' | 'sign_in' | 'help_desk' | 'export_file';

export interface Preset {
  id: string;
  name: string;
  kind: ProviderKind;
  imap: { host: string; port: number; tls: ImapTlsMode } | null;
  /** The provider refuses the account password over IMAP: an app password is needed. */
  app_password: 'required' | 'with_two_step' | 'no';
  /** Where the user makes an app password (and removes it once the migration is done). */
  app_password_url: string | null;
  /** Folders copied unless the user chooses others. */
  default_folders: string[];
  note: string | null;
  /** Address domains of the provider's own mailboxes. */
  domains: string[];
  /** Suffixes of MX hosts that mean this provider hosts the domain's mail. */
  mx: string[];
}

const imap = (host: string, port = 993, tls: ImapTlsMode = 'tls') => ({ host, port, tls });

/** Curated list; a server may add sign-in clients later (they answer provider_not_configured until then). */
export const PRESETS: readonly Preset[] = [
  {
    id: 'gmail',
    name: 'Gmail and Google Workspace (app password)',
    kind: 'imap',
    imap: imap('imap.gmail.com'),
    app_password: 'required',
    app_password_url: 'https://myaccount.google.com/apppasswords',
    default_folders: ['INBOX', '[Gmail]/Sent Mail'],
    note: 'Needs 2-Step Verification and IMAP access turned on; Gmail labels appear as folders.',
    domains: ['gmail.com', 'googlemail.com'],
    mx: ['google.com', 'googlemail.com'],
  },
  {
    id: 'yahoo',
    name: 'Yahoo Mail',
    kind: 'imap',
    imap: imap('imap.mail.yahoo.com'),
    app_password: 'required',
    app_password_url: 'https://login.yahoo.com/account/security',
    default_folders: ['INBOX', 'Sent'],
    note: null,
    domains: ['yahoo.com', 'ymail.com', 'rocketmail.com', 'yahoo.co.uk', 'yahoo.de', 'yahoo.fr'],
    mx: ['yahoodns.net'],
  },
  {
    id: 'icloud',
    name: 'iCloud Mail',
    kind: 'imap',
    imap: imap('imap.mail.me.com'),
    app_password: 'required',
    app_password_url: 'https://account.apple.com/account/manage',
    default_folders: ['INBOX', 'Sent Messages'],
    note: 'The user name is the part of the address before the @.',
    domains: ['icloud.com', 'me.com', 'mac.com'],
    mx: ['mail.icloud.com'],
  },
  {
    id: 'aol',
    name: 'AOL Mail',
    kind: 'imap',
    imap: imap('imap.aol.com'),
    app_password: 'required',
    app_password_url: 'https://login.aol.com/account/security',
    default_folders: ['INBOX', 'Sent'],
    note: null,
    domains: ['aol.com', 'aim.com'],
    mx: ['aol.com'],
  },
  {
    id: 'fastmail',
    name: 'Fastmail',
    kind: 'imap',
    imap: imap('imap.fastmail.com'),
    app_password: 'required',
    app_password_url: 'https://app.fastmail.com/settings/security/apps',
    default_folders: ['INBOX', 'Sent'],
    note: null,
    domains: ['fastmail.com', 'fastmail.fm'],
    mx: ['messagingengine.com'],
  },
  {
    id: 'zoho',
    name: 'Zoho Mail',
    kind: 'imap',
    imap: imap('imap.zoho.com'),
    app_password: 'with_two_step',
    app_password_url: 'https://accounts.zoho.com/home#security/app_password',
    default_folders: ['INBOX', 'Sent'],
    note: 'IMAP access must be enabled in Zoho Mail settings.',
    domains: ['zoho.com', 'zohomail.com'],
    mx: ['zoho.com', 'zoho.eu', 'zohomail.com'],
  },
  {
    id: 'yandex',
    name: 'Yandex Mail',
    kind: 'imap',
    imap: imap('imap.yandex.com'),
    app_password: 'required',
    app_password_url: 'https://id.yandex.com/security/app-passwords',
    default_folders: ['INBOX', 'Sent'],
    note: null,
    domains: ['yandex.com', 'yandex.ru', 'ya.ru'],
    mx: ['yandex.net', 'yandex.ru'],
  },
  {
    id: 'gmx',
    name: 'GMX',
    kind: 'imap',
    imap: imap('imap.gmx.net'),
    app_password: 'with_two_step',
    app_password_url: 'https://www.gmx.net/mein-account/',
    default_folders: ['INBOX', 'Gesendet'],
    note: 'POP3/IMAP access must be allowed in the GMX settings.',
    domains: ['gmx.net', 'gmx.de', 'gmx.at', 'gmx.ch', 'gmx.com'],
    mx: ['gmx.net', 'gmx.com'],
  },
  {
    id: 'webde',
    name: 'WEB.DE',
    kind: 'imap',
    imap: imap('imap.web.de'),
    app_password: 'with_two_step',
    app_password_url: 'https://web.de/email/sicherheit/',
    default_folders: ['INBOX', 'Gesendet'],
    note: 'POP3/IMAP access must be allowed in the WEB.DE settings.',
    domains: ['web.de'],
    mx: ['web.de'],
  },
  {
    id: 'mailbox_org',
    name: 'mailbox.org',
    kind: 'imap',
    imap: imap('imap.mailbox.org'),
    app_password: 'with_two_step',
    app_password_url: 'https://manage.mailbox.org/',
    default_folders: ['INBOX', 'Sent'],
    note: null,
    domains: ['mailbox.org'],
    mx: ['mailbox.org'],
  },
  {
    id: 'posteo',
    name: 'Posteo',
    kind: 'imap',
    imap: imap('posteo.de'),
    app_password: 'no',
    app_password_url: null,
    default_folders: ['INBOX', 'Sent'],
    note: null,
    domains: ['posteo.de', 'posteo.net'],
    mx: ['posteo.de'],
  },
  {
    id: 'ionos',
    name: 'IONOS',
    kind: 'imap',
    imap: imap('imap.ionos.com'),
    app_password: 'no',
    app_password_url: null,
    default_folders: ['INBOX', 'Sent Items'],
    note: null,
    domains: [],
    mx: ['ionos.com', 'ionos.de', 'kundenserver.de', '1and1.com'],
  },
  {
    id: 'google',
    name: 'Google (sign in with Google)',
    kind: 'sign_in',
    imap: imap('imap.gmail.com'),
    app_password: 'no',
    app_password_url: 'https://myaccount.google.com/permissions',
    // All Mail holds every message once; its labels (X-GM-LABELS) become the conversation's labels.
    default_folders: ['[Gmail]/All Mail'],
    note: 'Connects with a Google sign-in instead of a password; every message is copied once from All Mail, with its Gmail labels.',
    domains: [],
    mx: [],
  },
  {
    id: 'microsoft',
    name: 'Microsoft 365 and Outlook.com (sign in with Microsoft)',
    kind: 'sign_in',
    imap: imap('outlook.office365.com'),
    app_password: 'no',
    app_password_url: 'https://account.live.com/consent/Manage',
    default_folders: ['INBOX', 'Sent Items'],
    note: 'Microsoft accepts only a sign-in for IMAP, not a password.',
    domains: ['outlook.com', 'hotmail.com', 'live.com', 'msn.com', 'outlook.de', 'hotmail.co.uk'],
    mx: ['protection.outlook.com', 'olc.protection.outlook.com', 'hotmail.com'],
  },
  {
    id: 'zendesk',
    name: 'Zendesk',
    kind: 'help_desk',
    imap: null,
    app_password: 'no',
    app_password_url: null,
    default_folders: ['Tickets'],
    note: 'Copies tickets through the Zendesk API (read-only, GET requests only): connect with the Zendesk subdomain, an agent’s e-mail address and an API token.',
    domains: [],
    mx: [],
  },
  {
    id: 'help_scout',
    name: 'Help Scout',
    kind: 'help_desk',
    imap: null,
    app_password: 'no',
    app_password_url: null,
    default_folders: ['Tickets'],
    note: 'Copies conversations through the Help Scout API (read-only, GET requests only): connect with the App ID and App Secret of a private app.',
    domains: [],
    mx: [],
  },
  {
    id: 'imap',
    name: 'Other IMAP server',
    kind: 'imap',
    imap: null,
    app_password: 'no',
    app_password_url: null,
    default_folders: ['INBOX', 'Sent'],
    note: 'Enter the IMAP server, port and TLS mode.',
    domains: [],
    mx: [],
  },
  {
    id: 'export_file',
    name: 'Export file (mbox, .eml or Maildir in a zip)',
    kind: 'export_file',
    imap: null,
    app_password: 'no',
    app_password_url: null,
    default_folders: [],
    note: 'Upload the file in parts of at most 8 MiB.',
    domains: [],
    mx: [],
  },
];

export function findPreset(id: string): Preset | undefined {
  return PRESETS.find((p) => p.id === id);
}

/** The settings an operator sets before a sign-in provider can be used (empty: nothing to set). */
export function operatorSettings(preset: Preset): string[] {
  if (preset.id === 'google') return ['SVC_GOOGLE_CLIENT_ID', 'SVC_GOOGLE_CLIENT_SECRET'];
  if (preset.id === 'microsoft') return ['SVC_MICROSOFT_CLIENT_ID', 'SVC_MICROSOFT_CLIENT_SECRET', 'SVC_MICROSOFT_TENANT'];
  return [];
}

/** Sign-in providers need the operator's OAuth client; help desks bring their own API credentials. */
export function providerConfigured(preset: Preset, config: Pick<Config, 'oauth'>): boolean {
  if (preset.kind === 'sign_in') return (preset.id === 'google' || preset.id === 'microsoft') && config.oauth[preset.id] !== undefined;
  return preset.kind === 'imap' || preset.kind === 'export_file' || preset.kind === 'help_desk';
}

export interface Detection {
  provider: Preset;
  /** 'domain': a mailbox of the provider itself; 'mx': the domain's mail is hosted there; 'none': not found. */
  found_by: 'domain' | 'mx' | 'none';
  mx_hosts: string[];
}

function domainOf(address: string): string {
  return address
    .slice(address.lastIndexOf('@') + 1)
    .toLowerCase()
    .replace(/\.$/, '');
}

const matchesSuffix = (host: string, suffix: string) => host === suffix || host.endsWith(`.${suffix}`);

/** The provider of an address: its domain first, then the domain's MX records (nothing else is asked). */
export async function detectProvider(address: string, resolveMx: MxLookup): Promise<Detection> {
  const domain = domainOf(address);
  const byDomain = PRESETS.find((p) => p.domains.includes(domain));
  if (byDomain) return { provider: byDomain, found_by: 'domain', mx_hosts: [] };
  let hosts: string[] = [];
  try {
    hosts = (await resolveMx(domain)).sort((a, b) => a.priority - b.priority).map((r) => r.exchange.toLowerCase().replace(/\.$/, ''));
  } catch {
    hosts = [];
  }
  for (const host of hosts) {
    const byMx = PRESETS.find((p) => p.mx.some((suffix) => matchesSuffix(host, suffix)));
    if (byMx) return { provider: byMx, found_by: 'mx', mx_hosts: hosts };
  }
  return { provider: findPreset('imap')!, found_by: 'none', mx_hosts: hosts };
}
