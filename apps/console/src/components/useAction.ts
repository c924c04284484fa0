import { useCallback, useState } from 'react';

/**
 * One call to the API at a time from a button or a form: `busy` while it runs, and `error` for the line to show
 * (set by the action from a ProblemDetails, or "could not be reached" when the request itself failed).
 */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const run = useCallback(async (action: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch {
      setError('The service could not be reached.');
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, setError, run };
}
