export const APPLICATION_TYPES = ['private', 'public', 'management', 'expiring'] as const;
export type ApplicationType = (typeof APPLICATION_TYPES)[number];

export interface PermissionDefinition {
  type: string;
  description: string;
  applicationTypes: readonly ApplicationType[];
}

const PUBLIC_PRIVATE = ['public', 'private'] as const;
const MANAGEMENT = ['management'] as const;

/** The catalogue of CONTRACT.md section 4: every permission and the application types that may hold it. */
export const PERMISSIONS: readonly PermissionDefinition[] = [
  {
    type: 'token:create',
    description: 'Create tokens in the vault (POST /tokens, POST /tokenize), in the containers its rules allow',
    applicationTypes: PUBLIC_PRIVATE,
  },
  { type: 'token:update', description: 'Update tokens (PATCH /tokens/{id})', applicationTypes: PUBLIC_PRIVATE },
  {
    type: 'token:read',
    description: 'Read and search tokens (GET /tokens/{id}, GET /v2/tokens); its access rule decides reveal, mask or redact',
    applicationTypes: ['private', 'expiring'],
  },
  { type: 'token:search', description: "Search tokens with the platform's legacy search (GET /v2/tokens needs token:read)", applicationTypes: ['private'] },
  { type: 'token:delete', description: 'Delete tokens (DELETE /tokens/{id})', applicationTypes: ['private'] },
  { type: 'token:use', description: 'Detokenize: use token data in POST /detokenize, proxies and reactors', applicationTypes: ['private'] },
  { type: 'proxy:invoke', description: 'Invoke proxies that require authentication', applicationTypes: ['private', 'management'] },
  { type: 'tenant:read', description: 'Read the tenant', applicationTypes: MANAGEMENT },
  { type: 'tenant:update', description: 'Update the tenant', applicationTypes: MANAGEMENT },
  { type: 'application:create', description: 'Create applications', applicationTypes: MANAGEMENT },
  { type: 'application:read', description: 'Read applications', applicationTypes: MANAGEMENT },
  { type: 'application:update', description: 'Update applications and regenerate their keys', applicationTypes: MANAGEMENT },
  { type: 'application:delete', description: 'Delete applications', applicationTypes: MANAGEMENT },
  { type: 'proxy:create', description: 'Create proxies', applicationTypes: MANAGEMENT },
  { type: 'proxy:read', description: 'Read proxies', applicationTypes: MANAGEMENT },
  { type: 'proxy:update', description: 'Update proxies', applicationTypes: MANAGEMENT },
  { type: 'proxy:delete', description: 'Delete proxies', applicationTypes: MANAGEMENT },
  { type: 'log:read', description: 'Read audit logs', applicationTypes: MANAGEMENT },
  { type: 'log:stream', description: "Configure log streams (/logs/streams): the audit trail delivered to the tenant's SIEM", applicationTypes: MANAGEMENT },
];

const BY_NAME = new Map(PERMISSIONS.map((p) => [p.type, p]));

export function isKnownPermission(name: string): boolean {
  return BY_NAME.has(name);
}

export function permissionAllowedFor(name: string, type: ApplicationType): boolean {
  return BY_NAME.get(name)?.applicationTypes.includes(type) ?? false;
}

export function permissionsFor(type: ApplicationType): PermissionDefinition[] {
  return PERMISSIONS.filter((p) => p.applicationTypes.includes(type));
}

/** What the first application of a tenant holds: every permission a management application may hold. */
export const MANAGEMENT_PERMISSIONS: readonly string[] = permissionsFor('management').map((p) => p.type);
