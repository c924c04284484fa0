import { PermissionDeniedError } from '../shared/domain-error';
import { Principal, requirePermission } from './principal';

function principal(over: Partial<Principal>): Principal {
  return { applicationId: 'a', tenantId: 't', type: 'private', permissions: new Set(), canCreateExpiringApplications: false, ...over };
}

describe('requirePermission', () => {
  it('admits a held permission and refuses any other with a PermissionDeniedError naming it', () => {
    const holder = principal({ permissions: new Set(['token:read']) });
    expect(() => requirePermission(holder, 'token:read')).not.toThrow();
    expect(() => requirePermission(holder, 'token:delete')).toThrow(new PermissionDeniedError('token:delete'));
  });

  it('opens application:create to a private application with can_create_expiring_applications, and nothing else', () => {
    const minter = principal({ canCreateExpiringApplications: true });
    expect(() => requirePermission(minter, 'application:create')).not.toThrow();
    expect(() => requirePermission(minter, 'application:read')).toThrow(PermissionDeniedError);
    expect(() => requirePermission(principal({}), 'application:create')).toThrow(PermissionDeniedError);
    expect(() => requirePermission(principal({ type: 'management', permissions: new Set(['application:create']) }), 'application:create')).not.toThrow();
  });
});
