import { messageOf } from '../../../api/answer';
import type { Filters } from '../api/filters';
import { useExport } from '../api/logs';

/** Saves `text` as a file through a temporary object URL: the export needs the key header, so no plain link can fetch it. */
function saveText(text: string, type: string, name: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** Export the current filter as NDJSON or CSV: fetched with the key, then saved from an object URL. */
export function ExportButtons({ filters }: { filters: Filters }) {
  const exporting = useExport(filters);
  const busy = exporting.isPending ? exporting.variables : null;
  const error = messageOf(exporting.error);

  function download(format: 'ndjson' | 'csv') {
    exporting.mutate(format, {
      onSuccess: (text) => {
        const stamp = new Date().toISOString().replace(/[:.]/g, '-');
        saveText(text, format === 'csv' ? 'text/csv' : 'application/x-ndjson', `gatehouse-logs-${stamp}.${format}`);
        // Saved: the page lets go of the text.
        exporting.reset();
      },
    });
  }

  return (
    <section className="export" aria-label="Export">
      <span>Export the current filter:</span>
      <button type="button" className="secondary" disabled={busy !== null} onClick={() => download('ndjson')}>
        {busy === 'ndjson' ? 'Exporting…' : 'NDJSON'}
      </button>
      <button type="button" className="secondary" disabled={busy !== null} onClick={() => download('csv')}>
        {busy === 'csv' ? 'Exporting…' : 'CSV'}
      </button>
      {error && (
        <span className="error" role="alert">
          {error}
        </span>
      )}
    </section>
  );
}
