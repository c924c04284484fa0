import { useEffect, useState } from 'react';
import { fieldsOf, messageOf } from '../../../api/answer';
import type { Application } from '../../../api/client';
import { ConfirmDialog } from '../../../components/Dialog';
import { NumberField } from '../../../components/Field';
import { useDeleteApplication, useRegenerateKey } from '../api/applications';

/** What a dialog about an application's key takes: the application, whether it is the signed-in one, and `onDone`. */
interface KeyDialogProps<Done> {
  app: Application;
  isSelf: boolean;
  open: boolean;
  onClose: () => void;
  onDone: Done;
}

/** Regenerate an application's key, the current one optionally working a while longer; `onDone` gets the new key. */
export function RegenerateDialog({ app, isSelf, open, onClose, onDone }: KeyDialogProps<(key: string) => void>) {
  const [overlap, setOverlap] = useState('');
  const regenerate = useRegenerateKey(app.id);
  const { reset } = regenerate;
  // The API's message at the overlap field goes under it; any other above the buttons.
  const fieldError = fieldsOf(regenerate.error).previous_key_expires_in_seconds;
  const error = fieldError ? undefined : messageOf(regenerate.error);

  // Closed: the next opening starts afresh (and the answer, which held the key, is dropped).
  useEffect(() => {
    if (!open) {
      setOverlap('');
      reset();
    }
  }, [open, reset]);

  const submit = () => regenerate.mutate(overlap.trim() === '' ? undefined : Number(overlap), { onSuccess: ({ key }) => onDone(key) });

  return (
    <ConfirmDialog
      open={open}
      title={`Regenerate the key of “${app.name}”?`}
      confirmLabel="Regenerate"
      busy={regenerate.isPending}
      error={error}
      onConfirm={submit}
      onCancel={onClose}
    >
      <p>A new key is made and shown once. The current key stops working at once, unless you keep it working a while below.</p>
      {isSelf && <p className="warning">This is the key you are signed in with: once it stops working, sign in again with the new one.</p>}
      <NumberField
        id="previous-key-expires"
        label="Keep the current key working for (seconds, optional)"
        hint="0 to 86400; empty or 0: it stops at once."
        error={fieldError}
        min={0}
        max={86400}
        value={overlap}
        onChange={setOverlap}
      />
    </ConfirmDialog>
  );
}

/** Delete an application after a confirmation: its key stops working at once. */
export function DeleteDialog({ app, isSelf, open, onClose, onDone }: KeyDialogProps<() => void>) {
  const remove = useDeleteApplication(app.id);
  const { reset } = remove;

  useEffect(() => {
    if (!open) reset();
  }, [open, reset]);

  return (
    <ConfirmDialog
      open={open}
      title={`Delete “${app.name}”?`}
      confirmLabel="Delete"
      danger
      busy={remove.isPending}
      error={messageOf(remove.error)}
      onConfirm={() => remove.mutate(undefined, { onSuccess: onDone })}
      onCancel={onClose}
    >
      <p>Its key stops working at once, on every replica. This cannot be undone.</p>
      {isSelf && <p className="warning">This is the application you are signed in with: the console signs you out.</p>}
    </ConfirmDialog>
  );
}
