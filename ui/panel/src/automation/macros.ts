// The macros the member may run (their own and the shared ones), and running one on conversations.
import { signal } from '@preact/signals';
import { api, errorText, must } from '../api';
import { t } from '../i18n';
import { toast } from '../state';
import type { Macro } from './model';

export const macros = signal<Macro[] | null>(null);

export async function loadMacros(): Promise<Macro[]> {
  const res = await must(api.GET('/v1/macros'));
  const list = (res.data as Macro[]).slice().sort((a, b) => a.name.localeCompare(b.name));
  macros.value = list;
  return list;
}

/** Runs a macro on one conversation; the conversation's change arrives live. Says how it went in a toast. */
export async function runMacro(macro: Macro, conversationId: string): Promise<boolean> {
  try {
    await must(api.POST('/v1/conversations/{conversationId}/macros/{macroId}', { params: { path: { conversationId, macroId: macro.id } } }));
    toast(t('macro.ran', { name: macro.name }));
    return true;
  } catch (e) {
    toast(t('macro.failed', { name: macro.name, error: errorText(e) }));
    return false;
  }
}

/** Runs a macro on a selection, 100 conversations per request; answers the ids it changed. */
export async function runMacroOn(macro: Macro, ids: string[]): Promise<string[]> {
  const done: string[] = [];
  try {
    for (let i = 0; i < ids.length; i += 100) {
      const r = await must(
        api.POST('/v1/macros/{macroId}/run', { params: { path: { macroId: macro.id } }, body: { conversation_ids: ids.slice(i, i + 100) } }),
      );
      for (const x of r.results) if (x.ok) done.push(x.conversation_id);
    }
    toast(t('macro.ran_bulk', { name: macro.name, ok: done.length, count: ids.length }));
  } catch (e) {
    toast(t('macro.failed', { name: macro.name, error: errorText(e) }));
  }
  return done;
}
