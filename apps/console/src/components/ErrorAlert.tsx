/** A failed action's message, announced to screen readers as it appears; nothing when there is none. */
export function ErrorAlert({ message, id }: { message?: string | null | false; id?: string }) {
  if (!message) return null;
  return (
    <p id={id} className="error" role="alert">
      {message}
    </p>
  );
}
