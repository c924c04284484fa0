import { FieldError, NumberField } from './Field';

/** A rate limit as a form edits it: two texts, both empty for none. */
export interface RateLimitDraft {
  limit: string;
  windowSeconds: string;
}

export const NO_RATE_LIMIT: RateLimitDraft = { limit: '', windowSeconds: '' };

/** The draft of a `rate_limit` the API returned (absent: none). */
export function rateLimitDraft(rateLimit?: { limit: number; window_seconds: number } | null): RateLimitDraft {
  return rateLimit ? { limit: String(rateLimit.limit), windowSeconds: String(rateLimit.window_seconds) } : NO_RATE_LIMIT;
}

/** A number field's text as sent: empty is absent, anything else goes as typed, for the API to judge. */
export function toInt(text: string): number | undefined {
  return text.trim() === '' ? undefined : Number(text);
}

/** The `rate_limit` to send: null (none) when both fields are empty, else both as typed (the API validates them). */
export function rateLimitBody(draft: RateLimitDraft): { limit: number; window_seconds: number } | null {
  if (draft.limit.trim() === '' && draft.windowSeconds.trim() === '') return null;
  return { limit: toInt(draft.limit), window_seconds: toInt(draft.windowSeconds) } as { limit: number; window_seconds: number };
}

/**
 * The rate limit fieldset of the application and proxy forms: requests per window, the API's messages at each field
 * (`rate_limit.limit`, `rate_limit.window_seconds`) and for the whole (`rate_limit`) under it.
 */
export function RateLimitFields(props: {
  /** The prefix of the fields' ids: `rate-limit` unless told. */
  idPrefix?: string;
  draft: RateLimitDraft;
  onChange: (draft: RateLimitDraft) => void;
  hint: string;
  /** The API's messages at a field path (`rate_limit`, `rate_limit.limit`, `rate_limit.window_seconds`). */
  messagesAt: (path: string) => string[];
}) {
  const { idPrefix = 'rate-limit', draft, onChange, hint, messagesAt } = props;
  const errors = { all: messagesAt('rate_limit'), limit: messagesAt('rate_limit.limit'), windowSeconds: messagesAt('rate_limit.window_seconds') };
  const errorId = `${idPrefix}-error`;
  return (
    <fieldset className="group" aria-describedby={errors.all.length ? errorId : undefined}>
      <legend>Rate limit (optional)</legend>
      <p className="hint">{hint}</p>
      <div className="row">
        <NumberField id={`${idPrefix}-limit`} label="Requests" error={errors.limit} value={draft.limit} onChange={(limit) => onChange({ ...draft, limit })} />
        <NumberField
          id={`${idPrefix}-window`}
          label="Per window of (seconds)"
          error={errors.windowSeconds}
          value={draft.windowSeconds}
          onChange={(windowSeconds) => onChange({ ...draft, windowSeconds })}
        />
      </div>
      <FieldError id={errorId} messages={errors.all} />
    </fieldset>
  );
}
