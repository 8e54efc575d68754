// The details column's team: which team the conversation belongs to (beside its assignee).
import { t } from '../i18n';
import { teams } from '../teams';

export function TeamField(props: { value: string | null | undefined; onChange: (teamId: string | null) => void }) {
  const value = props.value ?? null;
  if (teams.value.length === 0 && !value) return null;
  return (
    <div class="field">
      <label for="team">{t('teams.field')}</label>
      <select id="team" class="select" value={value ?? ''} onChange={(e) => props.onChange(e.currentTarget.value || null)}>
        <option value="">{t('teams.none')}</option>
        {value && !teams.value.some((x) => x.id === value) && <option value={value}>{t('teams.event_other')}</option>}
        {teams.value.map((x) => (
          <option key={x.id} value={x.id}>
            {x.name}
          </option>
        ))}
      </select>
    </div>
  );
}
