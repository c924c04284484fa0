import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { answer } from '../../../api/answer';
import { useApi } from '../../../api/context';
import { cursorPaging } from '../../../api/paging';
import { createBody, StreamDraft } from './stream-form';

/** At most 20 streams a tenant (MAX_LOG_STREAMS_PER_TENANT): one page holds them all, the cursor is followed anyway. */
const PAGE_SIZE = 50;
/** State, lag and last sync move while the page is open: the list is read again this often. */
const REFRESH_MS = 3000;

/** The cache keys of log streams: every list under `lists` (a change invalidates them all). */
export const streamKeys = {
  lists: ['log-streams', 'list'] as const,
};

/** The tenant's log streams with their state and lag (GET /logs/streams), over the keyset cursor, kept fresh. */
export function useStreamList() {
  const api = useApi();
  return useInfiniteQuery({
    queryKey: streamKeys.lists,
    queryFn: ({ pageParam }) => answer(api.GET('/logs/streams', { params: { query: { size: PAGE_SIZE, ...(pageParam ? { start: pageParam } : {}) } } })),
    ...cursorPaging,
    refetchInterval: REFRESH_MS,
  });
}

/** POST /logs/streams: the created stream, with an https stream's signing secret this once. */
export function useCreateStream() {
  const api = useApi();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: (draft: StreamDraft) => answer(api.POST('/logs/streams', { body: createBody(draft) })),
    onSuccess: () => void queries.invalidateQueries({ queryKey: streamKeys.lists }),
  });
}

/** Pause (nothing sent until resumed, nothing skipped) or resume (from the last acknowledged position). */
export function useStreamAction() {
  const api = useApi();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: ({ id, action }: { id: string; action: 'pause' | 'resume' }) =>
      answer(
        action === 'pause'
          ? api.POST('/logs/streams/{id}/pause', { params: { path: { id } } })
          : api.POST('/logs/streams/{id}/resume', { params: { path: { id } } }),
      ),
    onSuccess: () => void queries.invalidateQueries({ queryKey: streamKeys.lists }),
  });
}

/** DELETE /logs/streams/{id}: nothing more is sent to its destination. */
export function useDeleteStream() {
  const api = useApi();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => answer(api.DELETE('/logs/streams/{id}', { params: { path: { id } } })),
    onSuccess: () => void queries.invalidateQueries({ queryKey: streamKeys.lists }),
  });
}
