import { RefObject, useCallback, useEffect, useRef, useState } from 'react';
import { fieldsOf } from '../api/answer';

/** A form's last refusal by the API: its line, its messages by field path, and where the summary of it stands. */
export interface Refusal {
  /** The messages by field path, kept while the next attempt runs. */
  errors: Record<string, string[]>;
  problem?: string;
  summary: RefObject<HTMLDivElement | null>;
  /** What a save's `onError` calls: keeps the refusal, and the summary takes the focus. */
  refused: (error: Error) => void;
}

/** The refusal state of a form the API validates: the summary is focused whenever a new refusal comes. */
export function useRefusal(): Refusal {
  const [errors, setErrors] = useState<Record<string, string[]>>({});
  const [problem, setProblem] = useState<string>();
  const summary = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (problem) summary.current?.focus();
  }, [problem, errors]);

  const refused = useCallback((error: Error) => {
    setErrors(fieldsOf(error));
    setProblem(error.message);
  }, []);
  return { errors, problem, summary, refused };
}

/**
 * The summary above a refused form: `heading` and the API's line, how many fields below are marked, and the messages
 * at paths the form shows no field for (`shown` says which it does).
 */
export function FormProblem({ refusal, heading, shown }: { refusal: Refusal; heading: string; shown: (path: string) => boolean }) {
  const { errors, problem, summary } = refusal;
  if (!problem) return null;
  const unplaced = Object.entries(errors).filter(([path]) => !shown(path));
  const placed = Object.keys(errors).length - unplaced.length;
  return (
    <div className="problem" role="alert" tabIndex={-1} ref={summary} data-testid="form-problem">
      <p>
        <strong>{heading}</strong> {problem}
        {placed > 0 ? ` See the ${placed === 1 ? 'field' : `${placed} fields`} marked below.` : ''}
      </p>
      {unplaced.length > 0 && (
        <ul>
          {unplaced.map(([path, messages]) => (
            <li key={path}>
              <code>{path}</code>: {messages.join(' ')}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
