import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { answer } from '../../../api/answer';
import type { Application } from '../../../api/client';
import { useApi } from '../../../api/context';
import { cursorPaging } from '../../../api/paging';
import type { components, paths } from '../../../api/schema.gen';

export type Token = components['schemas']['TokenResponse'];
export type TokenType = Token['type'];
export type CreateToken = components['schemas']['CreateTokenDto'];
export type TokenQuery = NonNullable<paths['/v2/tokens']['get']['parameters']['query']>;

export const TOKEN_TYPES: Array<{ value: TokenType; label: string }> = [
  { value: 'card', label: 'Card' },
  { value: 'bank', label: 'Bank account' },
  { value: 'card_number', label: 'Card number' },
  { value: 'social_security_number', label: 'Social security number' },
  { value: 'employer_id_number', label: 'Employer id number' },
  { value: 'us_bank_routing_number', label: 'US bank routing number' },
  { value: 'us_bank_account_number', label: 'US bank account number' },
  { value: 'token', label: 'Generic (any JSON)' },
];

export function typeLabel(type: string): string {
  return TOKEN_TYPES.find((t) => t.value === type)?.label ?? type;
}

/**
 * Whether the key holds `permission` for tokens at all: as a plain permission, or granted by one of its access rules
 * (a key may hold token permissions through its rules alone). Which tokens it reaches, and how, the API decides.
 */
export function holdsTokenPermission(application: Application, permission: string): boolean {
  if (application.permissions.includes(permission as never)) return true;
  return (application.rules ?? []).some((rule) => (rule.permissions as readonly string[] | undefined)?.includes(permission));
}

/** The search a deep link carries (never a sensitive value: containers, types, fingerprints and metadata are not). */
export interface TokenFilters {
  container: string;
  type: string;
  fingerprint: string;
  metadata_key: string;
  metadata_value: string;
}

export const NO_FILTERS: TokenFilters = { container: '', type: '', fingerprint: '', metadata_key: '', metadata_value: '' };

export function filtersFromSearch(search: string): TokenFilters {
  const params = new URLSearchParams(search);
  const filters: TokenFilters = {
    ...NO_FILTERS,
    container: params.get('container') ?? '',
    type: params.get('type') ?? '',
    fingerprint: params.get('fingerprint') ?? '',
  };
  for (const [name, value] of params) {
    if (name.startsWith('metadata.') && name.length > 'metadata.'.length) {
      filters.metadata_key = name.slice('metadata.'.length);
      filters.metadata_value = value;
      break;
    }
  }
  return filters;
}

/** The API's own parameter names: `container`, `type`, `fingerprint`, `metadata.<key>`. */
function filterParams(filters: TokenFilters): Record<string, string> {
  const params: Record<string, string> = {};
  if (filters.container) params.container = filters.container;
  if (filters.type) params.type = filters.type;
  if (filters.fingerprint) params.fingerprint = filters.fingerprint;
  if (filters.metadata_key) params[`metadata.${filters.metadata_key}`] = filters.metadata_value;
  return params;
}

export function filtersToSearch(filters: TokenFilters): string {
  const search = new URLSearchParams(filterParams(filters)).toString();
  return search ? `?${search}` : '';
}

export function listQuery(filters: TokenFilters, size: number, start?: string): TokenQuery {
  const query: Record<string, string | number | string[]> = { size, ...filterParams(filters) };
  if (filters.type) query.type = [filters.type];
  if (start) query.start = start;
  return query as TokenQuery;
}

export function metadataText(metadata: Record<string, string> | undefined): string {
  return Object.entries(metadata ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
}

const PAGE_SIZE = 20;

/**
 * The cache keys of tokens. A token's data is held while its page shows it, never longer (the query client's
 * `gcTime: 0`): not in storage, an address or a log line.
 */
export const tokenKeys = {
  searches: ['tokens', 'search'] as const,
  search: (filters: TokenFilters) => [...tokenKeys.searches, filters] as const,
  one: (id: string) => ['tokens', 'one', id] as const,
};

/** The tokens this key may read matching `filters`, newest first, 20 at a time over the keyset cursor. */
export function useTokenSearch(filters: TokenFilters) {
  const api = useApi();
  return useInfiniteQuery({
    queryKey: tokenKeys.search(filters),
    queryFn: ({ pageParam }) => answer(api.GET('/v2/tokens', { params: { query: listQuery(filters, PAGE_SIZE, pageParam) } })),
    ...cursorPaging,
  });
}

/** One token as the signed-in key may see it (its data revealed, masked, or absent: redacted). */
export function useToken(id: string) {
  const api = useApi();
  return useQuery({ queryKey: tokenKeys.one(id), queryFn: () => answer(api.GET('/tokens/{id}', { params: { path: { id } } })) });
}

/** Creates a token; its answer names the new id. */
export function useCreateToken() {
  const api = useApi();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: (body: CreateToken) => answer(api.POST('/tokens', { body })),
    onSuccess: () => void queries.invalidateQueries({ queryKey: tokenKeys.searches }),
  });
}

/** Deletes a token and its data for good. */
export function useDeleteToken(id: string) {
  const api = useApi();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: () => answer(api.DELETE('/tokens/{id}', { params: { path: { id } } })),
    onSuccess: () => void queries.invalidateQueries({ queryKey: tokenKeys.searches }),
  });
}
