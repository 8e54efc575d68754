import { toasts } from '../state';

export function Toasts() {
  return (
    <div class="toasts" role="status" aria-live="polite">
      {toasts.value.map((x) => (
        <div class="toast" key={x.id}>
          {x.text}
          {x.action && (
            <button type="button" class="btn toast-action" onClick={x.action.run}>
              {x.action.label}
            </button>
          )}
        </div>
      ))}
    </div>
  );
}
