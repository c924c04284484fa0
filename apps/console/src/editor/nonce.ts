/**
 * The style nonce the API put into this page's <meta> and its Content-Security-Policy (a fresh one per response of
 * index.html). CodeMirror stamps its <style> element with it (EditorView.cspNonce); under `vite dev`, which sends no
 * CSP, the placeholder is left and does no harm.
 */
export function styleNonce(): string {
  return document.querySelector<HTMLMetaElement>('meta[name="gatehouse-style-nonce"]')?.content ?? '';
}
