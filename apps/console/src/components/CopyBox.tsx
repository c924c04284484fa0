import { ReactNode, useEffect, useId, useRef, useState } from 'react';

/** A secret or an address to copy: read-only, selected on focus, and a Copy button (the Clipboard API). */
export function CopyBox({ label, value, note }: { label: string; value: string; note?: ReactNode }) {
  const id = useId();
  const input = useRef<HTMLInputElement>(null);
  const [status, setStatus] = useState('');

  async function copy() {
    try {
      await navigator.clipboard.writeText(value);
      setStatus('Copied.');
    } catch {
      // No clipboard access (an insecure origin, a refused permission): leave it selected for Ctrl+C.
      input.current?.select();
      setStatus('Selected: press Ctrl+C (or ⌘C) to copy.');
    }
  }

  return (
    <div className="copy-box">
      <label htmlFor={id}>{label}</label>
      <div className="copy-row">
        <input id={id} ref={input} className="mono" readOnly value={value} spellCheck={false} onFocus={(e) => e.target.select()} />
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
      </div>
      {note && <p className="hint">{note}</p>}
      <p role="status" className="hint">
        {status}
      </p>
    </div>
  );
}

/**
 * A secret the service just returned and never returns again, in a card of its own: its heading takes the focus when
 * it appears (and when the secret changes), and *I have copied it* dismisses it.
 */
export function ShownOnce({
  titleId,
  title,
  label,
  value,
  note,
  onDismiss,
}: {
  titleId: string;
  title: ReactNode;
  label: string;
  value: string;
  note: ReactNode;
  onDismiss: () => void;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    heading.current?.focus();
  }, [value]);
  return (
    <section className="card key-card" aria-labelledby={titleId}>
      <h2 id={titleId} tabIndex={-1} ref={heading}>
        {title}
      </h2>
      <CopyBox label={label} value={value} note={note} />
      <button type="button" className="secondary" onClick={onDismiss}>
        I have copied it
      </button>
    </section>
  );
}
