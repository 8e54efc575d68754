// What the migration screens share: the API's shapes the generated client lacks, presets and their
// wording, the wizard's steps and which of them a migration in each state may open.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { api, must, type Schemas } from '../api';
import type { MessageKey } from '../i18n';
import { locale, t } from '../i18n';
import { migrationEn } from './strings/en';

export type Migration = Schemas['Migration'] & {
  routing?: {
    forwarding_address: string | null;
    ways: { way: 'forwarding' | 'server_routing' | 'mx'; address?: string; domain?: string | null; old_mailbox_keeps_a_copy: boolean }[];
  };
  test_message?: { sent_at: string | null; arrived_at: string | null; route: 'forwarding' | 'direct' | null };
  sync?: {
    history_until: string;
    poll_seconds: number;
    last_polled_at: string | null;
    new_mail_from_old_mailbox: number;
    arrived_both_ways: number;
    quiet_period_hours: number;
    completes_at: string | null;
    stops_at: string | null;
  } | null;
  end_reason?: string | null;
  remove_history?: { confirm_count: number | null; conversations_deleted?: number; contacts_deleted?: number } | null;
};
export type State = Migration['state'];
type Preset = {
  id: string;
  name: string;
  kind: 'imap' | 'sign_in' | 'help_desk' | 'export_file';
  imap: { host: string; port: number; tls: 'tls' | 'starttls' | 'none' } | null;
  app_password: 'required' | 'with_two_step' | 'no';
  app_password_url: string | null;
  note: string | null;
  configured?: boolean;
  operator_settings?: string[];
};

/** A preset's name or note in the panel's language (the server's text when there is no translation). */
export function presetText(p: { id: string; name?: string; note?: string | null }, field: 'name' | 'note'): string | null {
  const key = `mig.preset.${p.id}.${field}`;
  if (key in migrationEn) return t(key as MessageKey);
  return (field === 'name' ? p.name : p.note) ?? null;
}
/** What kind of source a migration reads, for wording: the preset's kind and the provider's id. */
export type Source = { kind: Preset['kind']; provider: string };
export const SourceContext = createContext<Source>({ kind: 'imap', provider: 'imap' });

/**
 * A text in the wording of the source (a help desk has tickets and API credentials, a sign-in
 * provider a sign-in, an export file only the file): `key@provider`, then `key@kind`, then `key`.
 */
function sourceText(source: Source, key: MessageKey, vars?: Record<string, string | number>): string {
  for (const variant of [`${key}@${source.provider}`, `${key}@${source.kind}`]) if (variant in migrationEn) return t(variant as MessageKey, vars);
  return t(key, vars);
}
/** sourceText for the migration the wizard shows. */
export function useSourceText() {
  const source = useContext(SourceContext);
  return (key: MessageKey, vars?: Record<string, string | number>) => sourceText(source, key, vars);
}

// The presets change only with the server's settings: read once per page load.
let presetsRequest: Promise<Preset[]> | null = null;
export function loadPresets(): Promise<Preset[]> {
  presetsRequest ??= must(api.GET('/v1/migrations/presets'))
    .then((r) => r.data as unknown as Preset[])
    .catch((err: unknown) => {
      presetsRequest = null;
      throw err;
    });
  return presetsRequest;
}
export const sourceOf = (presets: Preset[], provider: string): Source => ({ kind: presets.find((p) => p.id === provider)?.kind ?? 'imap', provider });

export type Detected = {
  address: string;
  provider: string;
  provider_name: string;
  kind: Preset['kind'];
  found_by: 'domain' | 'mx' | 'none';
  configured: boolean;
};
export type Folder = {
  path: string;
  name: string;
  special_use: string | null;
  selectable: boolean;
  never_read: boolean;
  chosen: boolean;
  messages: number | null;
  /** A help desk's one entry: its tickets (null: the count is unknown). */
  tickets?: number | null;
};
type FolderSummary = {
  path: string;
  special_use: string | null;
  never_read: boolean;
  messages: number;
  to_copy: number;
  skipped: number;
  duplicates: number;
  label: string | null;
};
export type PlanSummary = {
  total: number;
  to_copy: number;
  conversations: number;
  duplicates: number;
  skipped: Record<string, number>;
  folders: FolderSummary[];
  missing_folders: string[];
  contacts_to_create: number;
  labels: string[];
  /** A help desk's tags that become labels (absent in plans made before tags were counted). */
  tags?: { tag: string; messages: number; conversations: number }[];
  estimated_bytes: number;
  estimated_seconds: number;
};
export type PreviewConversation = {
  subject: string | null;
  contact: { email: string | null; name: string | null; exists: boolean };
  status: 'open' | 'pending' | 'closed';
  labels: string[];
  messages: { direction: 'in' | 'out'; from: { name: string | null; address: string | null }; sent_at: string }[];
  last_message_at: string | null;
};

export const STEPS = ['source', 'connect', 'choose', 'map', 'review', 'copy', 'switch', 'done'] as const;
export type Step = (typeof STEPS)[number];

/** Where a migration in this state stands in the wizard. */
export function stepOfState(state: State): Step {
  if (state === 'draft') return 'connect';
  if (state === 'connected') return 'choose';
  if (state === 'scanning' || state === 'ready') return 'review';
  if (state === 'copying' || state === 'paused' || state === 'needs_attention') return 'copy';
  if (state === 'syncing') return 'switch';
  return 'done';
}

/** The action that lets a person go back to an earlier step. */
const STEP_ACTION: Partial<Record<Step, string[]>> = {
  connect: ['credentials', 'test', 'upload'],
  choose: ['folders', 'update'],
  map: ['update'],
  review: ['preview'],
};

export function reachable(m: Migration, step: Step): boolean {
  const natural = STEPS.indexOf(stepOfState(m.state));
  const i = STEPS.indexOf(step);
  if (i === natural) return true;
  // Map follows Choose before the dry run exists; other later steps wait for their state.
  const ahead = i > natural && !(step === 'map' && m.state === 'connected');
  if (ahead || i === 0) return false;
  return (STEP_ACTION[step] ?? []).some((a) => m.allowed_actions.includes(a));
}

export const STATE_KEY = (s: State) => `mig.state.${s}` as MessageKey;
export const ACTION_KEY = (a: string) => `mig.action.${a}` as MessageKey;

/** "1 message", "2 messages": the catalogue's `<base>_one` or `<base>_other` by the language's plural rules. */
export function plural(base: 'mig.n_messages' | 'mig.n_conversations' | 'mig.n_folders', n: number): string {
  const form = new Intl.PluralRules(locale.value).select(n) === 'one' ? 'one' : 'other';
  return t(`${base}_${form}` as MessageKey, { n });
}
