import { ReactNode, useEffect, useRef } from 'react';
import { ErrorAlert } from './ErrorAlert';

/**
 * A modal confirmation on the native `<dialog>`: showModal keeps the focus inside and makes the page behind inert,
 * Escape cancels, and the focus goes back to the control that opened it.
 */
export function ConfirmDialog({
  open,
  title,
  children,
  confirmLabel,
  danger,
  busy,
  error,
  onConfirm,
  onCancel,
}: {
  open: boolean;
  title: string;
  children?: ReactNode;
  confirmLabel: string;
  danger?: boolean;
  busy?: boolean;
  error?: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const opener = useRef<Element | null>(null);

  useEffect(() => {
    const node = dialog.current;
    if (!node) return;
    if (open && !node.open) {
      opener.current = document.activeElement;
      node.showModal();
    } else if (!open && node.open) {
      node.close();
      if (opener.current instanceof HTMLElement && opener.current.isConnected) opener.current.focus();
    }
  }, [open]);

  return (
    <dialog
      ref={dialog}
      className="dialog"
      aria-labelledby="dialog-title"
      onCancel={(event) => {
        event.preventDefault();
        if (!busy) onCancel();
      }}
    >
      {open && (
        <form
          method="dialog"
          noValidate
          onSubmit={(event) => {
            event.preventDefault();
            if (!busy) onConfirm();
          }}
        >
          <h2 id="dialog-title">{title}</h2>
          {children}
          <ErrorAlert message={error} />
          <div className="actions">
            <button type="button" className="secondary" onClick={onCancel} disabled={busy} autoFocus>
              Cancel
            </button>
            <button type="submit" className={danger ? 'danger' : undefined} disabled={busy}>
              {busy ? 'Working…' : confirmLabel}
            </button>
          </div>
        </form>
      )}
    </dialog>
  );
}
