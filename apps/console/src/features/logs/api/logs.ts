import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { answer } from '../../../api/answer';
import type { Checkpoint, ExportQuery, Log } from '../../../api/client';
import { useApi } from '../../../api/context';
import { CursorPage, cursorPaging } from '../../../api/paging';
import { Verification, verifyTrail } from '../../../verify';
import { filterParams, Filters, listQuery } from './filters';

const PAGE_SIZE = 50;

export const logKeys = {
  list: (filters: Filters) => ['logs', 'list', filters] as const,
  entityTypes: ['logs', 'entity-types'] as const,
  latestCheckpoint: ['logs', 'checkpoints', 'latest'] as const,
};

/** The logs under `filters`, newest first, 50 at a time over the keyset cursor. */
export function useLogList(filters: Filters) {
  const api = useApi();
  return useInfiniteQuery({
    queryKey: logKeys.list(filters),
    queryFn: async ({ pageParam }): Promise<CursorPage<Log>> => {
      const page = (await answer(api.GET('/logs', { params: { query: listQuery(filters, PAGE_SIZE, pageParam) } }))) as {
        data?: Log[];
        pagination?: { next?: string };
      };
      return { data: page.data ?? [], pagination: { next: page.pagination?.next } };
    },
    ...cursorPaging,
  });
}

/** The entity types to filter by (none while loading, or when they could not be read). */
export function useEntityTypes() {
  const api = useApi();
  return useQuery({ queryKey: logKeys.entityTypes, queryFn: () => answer(api.GET('/logs/entity-types')) }).data ?? [];
}

/** The last signed checkpoint: `undefined` while loading, `null` when there is none (or none could be read). */
export function useLatestCheckpoint(): Checkpoint | null | undefined {
  const api = useApi();
  return useQuery({
    queryKey: logKeys.latestCheckpoint,
    queryFn: async () => {
      const { data } = await api.GET('/logs/checkpoints', { params: { query: { size: 1 } } });
      return (data as { data?: Checkpoint[] } | undefined)?.data?.[0] ?? null;
    },
  }).data;
}

/** The export of the logs under `filters` as text (NDJSON or CSV): the key header is needed, so no plain link. */
export function useExport(filters: Filters) {
  const api = useApi();
  return useMutation({
    mutationFn: (format: 'ndjson' | 'csv') =>
      answer(api.GET('/logs/export', { params: { query: { format, ...filterParams(filters) } as ExportQuery }, parseAs: 'text' })),
  });
}

/**
 * The audit trail verified in the browser (src/verify.ts) over every checkpoint, the public keys the service serves
 * (current and retired), the retention anchor and the unfiltered NDJSON export; whatever did not load is a failed
 * verification saying so. The newest checkpoint read becomes the last signed one shown.
 */
export function useVerifyTrail() {
  const api = useApi();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (): Promise<Verification> => {
      try {
        const checkpoints: Checkpoint[] = [];
        let start: string | undefined;
        do {
          const { data } = await api.GET('/logs/checkpoints', { params: { query: { size: 100, ...(start ? { start } : {}) } } });
          const page = data as { data?: Checkpoint[]; pagination?: { next?: string } } | undefined;
          if (!page?.data) throw new Error('checkpoints');
          checkpoints.push(...page.data);
          start = page.pagination?.next;
        } while (start);
        const keys = await api.GET('/logs/public-keys');
        if (!keys.data) throw new Error('public keys');
        const publicKeys = keys.data.data.map((key) => key.public_key);
        queries.setQueryData(logKeys.latestCheckpoint, checkpoints[0] ?? null);
        // Retention may remove the oldest logs meanwhile: the export is verified from the anchor read before and after it.
        for (let attempt = 1; ; attempt++) {
          const before = await api.GET('/logs/retention-anchor');
          const trail = await api.GET('/logs/export', { params: { query: { format: 'ndjson' } }, parseAs: 'text' });
          const after = await api.GET('/logs/retention-anchor');
          if (!before.data || !after.data || typeof trail.data !== 'string') throw new Error('download');
          const anchor = (before.data.anchor ?? null) as Checkpoint | null;
          if ((anchor?.position ?? 0) === (after.data.anchor?.position ?? 0) || attempt === 3) {
            return await verifyTrail(trail.data, checkpoints, publicKeys, anchor);
          }
        }
      } catch (e) {
        return { ok: false, problem: `Verification could not run: ${e instanceof Error ? e.message : String(e)} did not load.` };
      }
    },
  });
}
