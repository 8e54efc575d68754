// A form's error under its fields, read out when it appears (role="alert"); nothing when there is none.
export function FormError(props: { error: string | null | undefined }) {
  if (!props.error) return null;
  return (
    <p class="error-text" role="alert">
      {props.error}
    </p>
  );
}
