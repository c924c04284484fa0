/** The browser's time zone, named next to every local time the console shows. */
export const TIME_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;

export const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** An ISO instant in the browser's time zone, or `fallback` when absent. */
export function formatTime(iso: string | undefined, fallback = ''): string {
  return iso ? timeFormat.format(new Date(iso)) : fallback;
}

/** `datetime-local` speaks the browser's local time; the URL and the API speak UTC instants. */
export function localInputToIso(value: string): string {
  if (!value) return '';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? '' : date.toISOString();
}

export function isoToLocalInput(iso: string): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}
