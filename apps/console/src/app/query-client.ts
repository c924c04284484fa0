import { QueryClient } from '@tanstack/react-query';

/**
 * The cache of one signed-in session (a new one for each sign-in, so nothing read with one key is shown to another).
 * It keeps the console's behaviour: nothing outlives the page that showed it (`gcTime: 0`: a page opened again reads
 * afresh, and a token's data or a new key is not held once its page is left), no retries (a refused call shows the
 * API's message at once, and the browser logs one 4xx, not four), and no refetch on focus or reconnect.
 */
export function newQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: { gcTime: 0, retry: false, refetchOnWindowFocus: false, refetchOnReconnect: false },
      mutations: { gcTime: 0, retry: false },
    },
  });
}
