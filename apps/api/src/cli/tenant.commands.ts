import { Application, ApplicationRepository, CreateTenant, GetTenant, ListTenants, RotateManagementKey, Tenant } from '@gatehouse/domain';
import { CliCommand, CliUsageError, JSON_OPTION, printJson } from './command';

function tenantJson(tenant: Tenant): { id: string; name: string; created_at: string } {
  return { id: tenant.id, name: tenant.name, created_at: tenant.createdAt.toISOString() };
}

/** An application as the API returns it (the DTO module loads Swagger: only when a command prints one). */
async function applicationJson(app: Application, key?: string): Promise<unknown> {
  const { toApplicationResponse } = await import('../applications/applications.dto');
  return toApplicationResponse(app, key);
}

const create: CliCommand = {
  name: 'tenant create',
  synopsis: '--name NAME [--json]',
  summary: 'create a tenant and its first management key (names are unique)',
  options: { name: { type: 'string' }, ...JSON_OPTION },
  async run({ values }, context) {
    if (typeof values.name !== 'string') throw new CliUsageError('tenant create needs --name NAME');
    const { app } = await context();
    const created = await app.get(CreateTenant).execute(values.name);
    if (values.json) {
      return printJson({ tenant: tenantJson(created.tenant), application: await applicationJson(created.application, created.key) });
    }
    return `tenant ${created.tenant.id} (${created.tenant.name}) created\nmanagement key: ${created.key}\n`;
  },
};

const list: CliCommand = {
  name: 'tenant list',
  synopsis: '[--json]',
  summary: 'list every tenant, oldest first',
  options: JSON_OPTION,
  async run({ values }, context) {
    const tenants = await (await context()).app.get(ListTenants).execute();
    if (values.json) return printJson(tenants.map(tenantJson));
    if (tenants.length === 0) return 'no tenants\n';
    return table([['ID', 'CREATED', 'NAME'], ...tenants.map((t) => [t.id, t.createdAt.toISOString(), t.name])]);
  },
};

const show: CliCommand = {
  name: 'tenant show',
  synopsis: 'TENANT [--json]',
  summary: 'a tenant (by id or name) and its management applications',
  options: JSON_OPTION,
  positionals: ['TENANT'],
  async run({ values, positionals }, context) {
    const { app } = await context();
    const tenant = await app.get(GetTenant).execute(positionals[0]!);
    const management = await managementApplications(app.get(ApplicationRepository), tenant.id);
    if (values.json) return printJson({ ...tenantJson(tenant), management_applications: await Promise.all(management.map((a) => applicationJson(a))) });
    const lines = [`id:      ${tenant.id}`, `name:    ${tenant.name}`, `created: ${tenant.createdAt.toISOString()}`, 'management applications:'];
    if (management.length === 0) lines.push('  none (gatehouse tenant rotate-key creates one)');
    for (const a of management) lines.push(`  ${a.id}  ${a.name}${a.createdBy ? '' : '  (created with the tenant)'}`);
    return `${lines.join('\n')}\n`;
  },
};

const rotateKey: CliCommand = {
  name: 'tenant rotate-key',
  synopsis: 'TENANT [--json]',
  summary: "a new key for the tenant's own management application (recovery when its keys are lost)",
  options: JSON_OPTION,
  positionals: ['TENANT'],
  async run({ values, positionals }, context) {
    const rotated = await (await context()).app.get(RotateManagementKey).execute(positionals[0]!);
    if (values.json)
      return printJson({
        tenant: tenantJson(rotated.tenant),
        application: await applicationJson(rotated.application, rotated.key),
        recreated: rotated.recreated,
      });
    const what = rotated.recreated ? 'created (the previous one was deleted)' : 'has a new key; the previous key no longer works';
    return `management application ${rotated.application.id} of tenant ${rotated.tenant.name} ${what}\nmanagement key: ${rotated.key}\n`;
  },
};

async function managementApplications(applications: ApplicationRepository, tenantId: string): Promise<Application[]> {
  const found: Application[] = [];
  for (let page = 1; ; page++) {
    const { items } = await applications.list(tenantId, { types: ['management'] }, { page, size: 100 });
    found.push(...items);
    if (items.length < 100) return found.reverse();
  }
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n') + '\n';
}

export const TENANT_COMMANDS: CliCommand[] = [create, list, show, rotateKey];
