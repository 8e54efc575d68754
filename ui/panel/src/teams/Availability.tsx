// The signed-in member's availability for auto-assignment: auto (while online in the panel), available, away.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must } from '../api';
import { t } from '../i18n';
import { toast } from '../state';
import './teams.css';

type Choice = 'auto' | 'available' | 'away';
const CHOICES: Choice[] = ['auto', 'available', 'away'];

export function AvailabilityControl() {
  const [value, setValue] = useState<Choice | null>(null);
  useEffect(() => {
    void api.GET('/v1/me/availability').then((r) => r.data && setValue(r.data.availability));
  }, []);
  if (!value) return null;
  const choose = async (next: Choice) => {
    const before = value;
    setValue(next);
    try {
      await must(api.PUT('/v1/me/availability', { body: { availability: next } }));
    } catch (e) {
      setValue(before);
      toast(t('action.failed', { error: errorText(e) }));
    }
  };
  return (
    <fieldset class="card availability">
      <legend>{t('teams.availability')}</legend>
      <p class="muted">{t('teams.availability_hint')}</p>
      <div class="checks">
        {CHOICES.map((c) => (
          <label key={c}>
            <input type="radio" name="availability" value={c} checked={value === c} onChange={() => void choose(c)} />
            {t(`teams.availability_${c}`)}
          </label>
        ))}
      </div>
    </fieldset>
  );
}
