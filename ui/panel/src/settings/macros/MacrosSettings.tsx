// Settings › Macros: the member's own macros and the shared ones (owners and admins share and edit
// those), each a name and the same actions a rule has (the one ActionsBuilder).
import { useEffect, useState } from 'preact/hooks';
import { api, type BodyOf, errorText, must } from '../../api';
import { type Action, ActionsBuilder, actionBody, actionProblem, describeActions, loadMacros, loadOptions, type Macro, macros } from '../../automation';
import { Confirm } from '../../components/Confirm';
import { DataTable, LoadedList } from '../../components/DataTable';
import { FormError } from '../../components/FormError';
import { type MessageKey, t } from '../../i18n';
import { me, membership, toast } from '../../state';

export function MacrosSettings() {
  const manager = membership.value?.role === 'owner' || membership.value?.role === 'admin';
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState<Macro | null>(null);
  const [formKey, setFormKey] = useState(0);
  const [deleting, setDeleting] = useState<Macro | null>(null);
  const reload = () =>
    Promise.all([loadOptions(), loadMacros()]).then(
      () => setError(null),
      (e) => setError(errorText(e)),
    );
  useEffect(() => void reload(), []);
  const mayEdit = (m: Macro) => (m.shared ? manager : m.owner_member_id === me.value?.person.id);
  const edit = (m: Macro | null) => {
    setEditing(m);
    setFormKey((k) => k + 1);
    requestAnimationFrame(() => document.getElementById('macro-name')?.focus());
  };
  return (
    <>
      <h1>{t('macro.title')}</h1>
      <p class="lead">{t('macro.lead')}</p>
      <MacroForm key={formKey} macro={editing} manager={manager} onDone={() => (edit(null), void reload())} onCancel={() => edit(null)} />
      <LoadedList rows={macros.value} error={error} retry={reload} empty={t('macro.empty')}>
        {(rows) => (
          <DataTable
            label={t('macro.table')}
            testId="macros"
            columns={[t('macro.col_name'), t('macro.col_actions'), t('macro.col_who'), { hidden: t('macro.col_buttons') }]}
          >
            {rows.map((m) => (
              <tr key={m.id}>
                <td>
                  <strong>{m.name}</strong>
                </td>
                <td class="auto-macro-actions">{describeActions(m.actions)}</td>
                <td>{m.shared ? t('macro.everyone') : t('macro.personal')}</td>
                <td>
                  {mayEdit(m) && (
                    <div class="auto-buttons">
                      <button class="btn" type="button" aria-label={t('macro.edit_named', { name: m.name })} onClick={() => edit(m)}>
                        {t('auto.edit')}
                      </button>
                      <button class="btn btn-danger" type="button" aria-label={t('macro.delete_named', { name: m.name })} onClick={() => setDeleting(m)}>
                        {t('macro.delete')}
                      </button>
                    </div>
                  )}
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </LoadedList>
      {deleting && (
        <Confirm
          title={t('macro.delete_named', { name: deleting.name })}
          lead={t('macro.delete_lead', { name: deleting.name })}
          action={t('macro.delete')}
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            try {
              await must(api.DELETE('/v1/macros/{macroId}', { params: { path: { macroId: deleting.id } } }));
              setDeleting(null);
              if (editing?.id === deleting.id) edit(null);
              void reload();
            } catch (err) {
              toast(t('action.failed', { error: errorText(err) }));
            }
          }}
        />
      )}
    </>
  );
}

function MacroForm(props: { macro: Macro | null; manager: boolean; onDone: () => void; onCancel: () => void }) {
  const m = props.macro;
  const [name, setName] = useState(m?.name ?? '');
  const [shared, setShared] = useState(m?.shared ?? false);
  const [actions, setActions] = useState<Action[]>(m?.actions ?? []);
  const [error, setError] = useState<string | null>(null);
  const problems = [
    ...(name.trim() ? [] : [t('auto.problem.name')]),
    ...(actions.length ? [] : [t('auto.problem.no_actions')]),
    ...actions.flatMap((a, i) => {
      const p = actionProblem(a);
      return p ? [t('auto.problem.action', { n: i + 1, problem: t(`auto.problem.${p}` as MessageKey) })] : [];
    }),
  ];
  return (
    <form
      class="card auto-form"
      aria-labelledby="macro-form-title"
      noValidate
      onSubmit={async (e) => {
        e.preventDefault();
        if (problems.length) {
          setError(`${t('auto.problems')} ${problems.join(' ')}`);
          return;
        }
        setError(null);
        const body = { name: name.trim(), shared, actions: actions.map(actionBody) } as BodyOf<'/v1/macros', 'post'>;
        try {
          if (m) await must(api.PATCH('/v1/macros/{macroId}', { params: { path: { macroId: m.id } }, body }));
          else await must(api.POST('/v1/macros', { body }));
          toast(t('macro.saved'));
          props.onDone();
        } catch (err) {
          setError(errorText(err));
        }
      }}
    >
      <h2 id="macro-form-title" style={{ marginTop: 0 }}>
        {m ? t('macro.edit_title', { name: m.name }) : t('macro.new')}
      </h2>
      <div class="field">
        <label for="macro-name">{t('macro.name')}</label>
        <input id="macro-name" class="input" maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </div>
      <fieldset class="field auto-plain">
        <legend>{t('macro.shared')}</legend>
        <div class="checks">
          <label>
            <input type="radio" name="macro-shared" checked={!shared} onChange={() => setShared(false)} />
            {t('macro.shared_no')}
          </label>
          <label>
            <input type="radio" name="macro-shared" checked={shared} disabled={!props.manager} onChange={() => setShared(true)} />
            {t('macro.shared_yes')}
          </label>
        </div>
        {!props.manager && <span class="hint">{t('macro.shared_managers')}</span>}
      </fieldset>
      <fieldset class="auto-part">
        <legend>{t('act.title')}</legend>
        <ActionsBuilder id="macro-act" actions={actions} onChange={setActions} />
      </fieldset>
      <FormError error={error} />
      <div class="auto-buttons">
        <button class="btn btn-primary" type="submit">
          {m ? t('settings.save') : t('macro.create')}
        </button>
        {m && (
          <button class="btn" type="button" onClick={props.onCancel}>
            {t('settings.cancel')}
          </button>
        )}
      </div>
    </form>
  );
}
