import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { answer, ApiError } from '../../../api/answer';
import { useApi } from '../../../api/context';
import { createBody, patchBody, Proxy, ProxyForm } from './proxy-form';
import { tryProxy, TryRequest } from './try-proxy';

const PAGE_SIZE = 20;

/** The cache keys of proxies: every list under `lists` (a change invalidates them all), one by id. */
export const proxyKeys = {
  lists: ['proxies', 'list'] as const,
  list: (page: number, name: string) => [...proxyKeys.lists, { page, name }] as const,
  one: (id: string) => ['proxies', 'one', id] as const,
};

/**
 * One page of the tenant's proxies, newest first (page and size, CONTRACT section 1), with the API's name filter
 * (`*` matches anything). The page shown stays while the next one loads.
 */
export function useProxyList(page: number, name: string, enabled: boolean) {
  const api = useApi();
  return useQuery({
    queryKey: proxyKeys.list(page, name),
    queryFn: () => answer(api.GET('/proxies', { params: { query: { page, size: PAGE_SIZE, ...(name ? { name } : {}) } } })),
    enabled,
    placeholderData: keepPreviousData,
  });
}

/** One proxy by id (undefined: none to read); a 404 or a malformed id says there is no such proxy. */
export function useProxy(id: string | undefined) {
  const api = useApi();
  return useQuery({
    queryKey: proxyKeys.one(id ?? ''),
    queryFn: async () => {
      try {
        return await answer(api.GET('/proxies/{id}', { params: { path: { id: id! } } }));
      } catch (error) {
        throw error instanceof ApiError && (error.status === 404 || error.status === 400) ? new ApiError('There is no such proxy.', error.status) : error;
      }
    },
    enabled: id !== undefined,
  });
}

/**
 * Saves the form: a POST for a new proxy, else a merge PATCH of what the form changed against `before` (the proxy as
 * loaded), so what the form does not show stays as it is.
 */
export function useSaveProxy() {
  const api = useApi();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: ({ form, before }: { form: ProxyForm; before?: Proxy }) =>
      before
        ? answer(
            api.PATCH('/proxies/{id}', {
              params: { path: { id: before.id } },
              body: patchBody(form, before),
              headers: { 'Content-Type': 'application/merge-patch+json' },
            }),
          )
        : answer(api.POST('/proxies', { body: createBody(form) })),
    onSuccess: (saved) => {
      queries.setQueryData(proxyKeys.one(saved.id), saved);
      void queries.invalidateQueries({ queryKey: proxyKeys.lists });
    },
  });
}

/** Deletes a proxy: its key stops working at once for every caller. */
export function useDeleteProxy() {
  const api = useApi();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => answer(api.DELETE('/proxies/{id}', { params: { path: { id } } })),
    onSuccess: () => void queries.invalidateQueries({ queryKey: proxyKeys.lists }),
  });
}

/** Sends one request through the proxy ("Try the proxy"); the response whatever its status, or a failure to send. */
export function useTryProxy() {
  const api = useApi();
  return useMutation({ mutationFn: (request: TryRequest) => tryProxy(api, request) });
}
