import { withTenant } from '../testing/tenant-spec-fixture';
import { AuthenticateSvcBridgeCall } from './authenticate-svc-bridge-call';

async function setup() {
  const s = await withTenant();
  return { ...s, authenticate: new AuthenticateSvcBridgeCall(s.applications, s.clock) };
}

describe("AuthenticateSvcBridgeCall: a proxy's svc, bound by its last writer's authority at every call", () => {
  it("acts as the proxy's application only while the writer holds what that application can do", async () => {
    const s = await setup();
    const { application: writer } = await s.create.execute(s.admin, { name: 'writer', type: 'management', permissions: ['proxy:update'] });
    const { application: bound } = await s.create.execute(s.admin, { name: 'bound', type: 'private', permissions: ['token:read'] });
    const tenant = s.admin.tenantId;
    expect((await s.authenticate.execute(tenant, bound.id, writer.id)).applicationId).toBe(bound.id);
    // Given more since (the power to mint keys), beyond the writer: refused.
    await s.applications.update({ ...bound, canCreateExpiringApplications: true });
    await expect(s.authenticate.execute(tenant, bound.id, writer.id)).rejects.toThrow(
      /svc is refused: the application that last wrote this proxy may not lend svc to .*can_create_expiring_applications/,
    );
    // Vouched for by a writer that holds it, or by none needed (the application itself): served.
    expect((await s.authenticate.execute(tenant, bound.id, s.admin.applicationId)).canCreateExpiringApplications).toBe(true);
    expect((await s.authenticate.execute(tenant, bound.id, bound.id)).applicationId).toBe(bound.id);
    // A writer that is gone, or none recorded, vouches for nothing.
    for (const gone of [null, '00000000-0000-4000-8000-000000000000']) {
      await expect(s.authenticate.execute(tenant, bound.id, gone)).rejects.toThrow(/last wrote this proxy no longer exists/);
    }
  });
});
