// The API key lives in memory and in sessionStorage (gone when the tab closes), never in a cookie or localStorage:
// a cookie would travel with every request (CSRF), localStorage would outlive the session on a shared machine.
const STORAGE_KEY = 'gatehouse.console.key';

export function storedKey(): string | null {
  try {
    return window.sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

export function storeKey(key: string): void {
  try {
    window.sessionStorage.setItem(STORAGE_KEY, key);
  } catch {
    // Storage refused (private mode, quota): the key stays in memory for this page only.
  }
}

export function forgetKey(): void {
  try {
    window.sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // Nothing stored.
  }
}
