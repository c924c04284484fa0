import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { answer, ApiError } from '../../../api/answer';
import type { Application, ApplicationType, CreateApplication, UpdateApplication } from '../../../api/client';
import { useApi } from '../../../api/context';
import { cursorPaging } from '../../../api/paging';

const PAGE_SIZE = 20;

/** The cache keys of applications: every list under `lists` (a change invalidates them all), one by id. */
export const applicationKeys = {
  lists: ['applications', 'list'] as const,
  list: () => [...applicationKeys.lists, 'newest'] as const,
  svc: () => [...applicationKeys.lists, 'svc'] as const,
  one: (id: string) => ['applications', 'one', id] as const,
  permissions: (type: ApplicationType) => ['permissions', type] as const,
};

/** The tenant's applications, newest first, 20 at a time over the keyset cursor. */
export function useApplicationList() {
  const api = useApi();
  return useInfiniteQuery({
    queryKey: applicationKeys.list(),
    queryFn: ({ pageParam }) => answer(api.GET('/applications', { params: { query: { size: PAGE_SIZE, ...(pageParam ? { start: pageParam } : {}) } } })),
    ...cursorPaging,
  });
}

/** One application by id (a 404 says so in words). */
export function useApplication(id: string) {
  const api = useApi();
  return useQuery({
    queryKey: applicationKeys.one(id),
    queryFn: async () => {
      try {
        return await answer(api.GET('/applications/{id}', { params: { path: { id } } }));
      } catch (error) {
        throw error instanceof ApiError && error.status === 404 ? new ApiError('No such application in this tenant.', 404) : error;
      }
    },
  });
}

/**
 * The applications a proxy's svc client may act as (public and private, the newest 100), when the key may read
 * applications; none otherwise, or when they could not be read (the id is typed then).
 */
export function useSvcApplications(enabled: boolean): Application[] {
  const api = useApi();
  const query = useQuery({
    queryKey: applicationKeys.svc(),
    queryFn: () => answer(api.GET('/applications', { params: { query: { type: ['private', 'public'], size: 100 } } })),
    enabled,
  });
  return query.data?.data ?? [];
}

/** The permissions an application of `type` may hold (GET /permissions?application_type=). */
export function usePermissionCatalogue(type: ApplicationType) {
  const api = useApi();
  return useQuery({
    queryKey: applicationKeys.permissions(type),
    queryFn: () => answer(api.GET('/permissions', { params: { query: { application_type: type } } }), 'The permissions could not be loaded.'),
  });
}

/** Creates an application (its answer carries the key, shown once) or replaces `existing` (PUT). */
export function useSaveApplication(existing?: Application) {
  const api = useApi();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: (body: CreateApplication) =>
      existing
        ? answer(api.PUT('/applications/{id}', { params: { path: { id: existing.id } }, body: body as UpdateApplication }))
        : answer(api.POST('/applications', { body })),
    onSuccess: (saved) => {
      // Never the new key into the cache: only an update's answer (which has none) stands for the application.
      if (existing) queries.setQueryData(applicationKeys.one(saved.id), saved);
      void queries.invalidateQueries({ queryKey: applicationKeys.lists });
    },
  });
}

/**
 * Regenerates the key of `id`, the current one working `overlapSeconds` longer (undefined: stops at once). The new
 * key goes to the caller only: the cache gets the application without it (and is not read again: the signed-in key may
 * be the one that just stopped working).
 */
export function useRegenerateKey(id: string) {
  const api = useApi();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (overlapSeconds: number | undefined) => {
      const body = overlapSeconds === undefined ? {} : { previous_key_expires_in_seconds: overlapSeconds };
      const { key, ...application } = await answer(api.POST('/applications/{id}/regenerate', { params: { path: { id } }, body }));
      if (!key) throw new ApiError('The service returned no key.');
      return { application: application as Application, key };
    },
    onSuccess: ({ application }) => queries.setQueryData(applicationKeys.one(id), application),
  });
}

/** Deletes the application `id`: its key stops working at once. */
export function useDeleteApplication(id: string) {
  const api = useApi();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: () => answer(api.DELETE('/applications/{id}', { params: { path: { id } } })),
    onSuccess: () => void queries.invalidateQueries({ queryKey: applicationKeys.lists }),
  });
}
