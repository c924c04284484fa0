import { canonicalApplication, canonicalProxy, CurrentApplication, CurrentProxy, TenantState } from './model';
import { computePlan } from './plan';
import { escapePlaceholders, expandPlaceholders, placeholderName } from './placeholders';

const app = (name: string, type: 'private' | 'public' | 'management' = 'private', extra: object = {}) =>
  canonicalApplication({ name, type, permissions: type === 'management' ? ['log:read'] : ['token:read'], ...extra });
const proxy = (name: string, extra: object = {}) => canonicalProxy({ name, destination_url: 'https://api.example.com', ...extra });
const current = <T>(id: string, spec: T) => ({ id, ...spec });

describe('computePlan', () => {
  const self = current('self', app('admin', 'management', { permissions: ['application:read'] }));
  const state = (applications: CurrentApplication[], proxies: CurrentProxy[] = []): TenantState => ({
    tenantId: 't',
    self: { id: 'self', name: 'admin', type: 'management', permissions: new Set() },
    applications: [self, ...applications],
    proxies,
  });

  it('creates applications before proxies, updates the key in use last, and deletes proxies before applications', () => {
    const plan = computePlan(
      {
        applications: [app('new'), app('changed', 'private', { permissions: ['token:search'] }), { ...self, permissions: ['log:read'] }],
        proxies: [proxy('p', { application: 'new' })],
      },
      state([current('a1', app('changed')), current('a2', app('gone'))], [current('p2', proxy('old'))]),
      { prune: true },
    );
    expect(plan.problems).toEqual([]);
    expect(plan.changes.map((c) => `${c.action} ${c.kind} ${c.name}`)).toEqual([
      'create application new',
      'create proxy p',
      'update application changed',
      'update application admin',
      'delete proxy old',
      'delete application gone',
    ]);
    expect(plan.changes[2]).toMatchObject({ fields: ['permissions: +token:search -token:read'] });
  });

  it('lists what the file leaves out without --prune, and never the key in use', () => {
    const plan = computePlan({ applications: [] }, state([current('a1', app('extra'))]), { prune: false });
    expect(plan).toMatchObject({ changes: [], unmanaged: [{ kind: 'application', name: 'extra' }], notManaged: ['proxies'] });
    expect(computePlan({ applications: [] }, state([]), { prune: true }).changes).toEqual([]);
  });

  it('compares canonical forms: order of permissions and rules, defaults and empty maps are no change', () => {
    const rules = [
      { priority: 2, container: '/b/', transform: 'mask', permissions: ['token:read'] },
      { priority: 1, container: '/a/', transform: 'reveal', permissions: ['token:search', 'token:read'] },
    ];
    const declared = app('x', 'private', { permissions: ['token:search', 'token:read', 'token:read'], rules });
    const stored = current(
      'a1',
      app('x', 'private', { permissions: ['token:read', 'token:search'], rules: [...rules].reverse(), can_create_expiring_applications: null }),
    );
    const p = proxy('p', { configuration: {}, require_auth: null });
    const plan = computePlan({ applications: [declared], proxies: [p] }, state([stored], [current('p1', proxy('p', { require_auth: true }))]), {
      prune: false,
    });
    expect(plan.changes).toEqual([]);
    expect(plan.unchanged).toBe(2);
  });

  it('names changed fields, never configuration values', () => {
    const plan = computePlan(
      { proxies: [proxy('p', { configuration: { A: 'new', C: 'c' }, request_transform: 'x\ny\n', rate_limit: { limit: 5, window_seconds: 1 } })] },
      state([], [current('p1', proxy('p', { configuration: { A: 'old', B: 'b' }, response_transform: 'r' }))]),
      { prune: false },
    );
    expect(plan.changes[0]).toMatchObject({
      fields: [
        'configuration: ~A +C -B (values not shown)',
        'request_transform: added (2 lines)',
        'response_transform: removed',
        'rate_limit: none -> 5 per 1 s',
      ],
    });
    expect(JSON.stringify(plan)).not.toMatch(/"(old|b)"/);
  });

  it('refuses a type change, a name the tenant holds twice, and bindings it cannot make', () => {
    const plan = computePlan(
      {
        applications: [app('x', 'public', { permissions: ['token:create'] }), app('twice')],
        proxies: [proxy('p1', { application: 'nowhere' }), proxy('p2', { application: 'admin' })],
      },
      state([current('a1', app('x')), current('a2', app('twice')), current('a3', app('twice'))]),
      { prune: false },
    );
    expect(plan.problems).toEqual([
      expect.stringMatching(/^application 'x' is private in the tenant and public in the file: an application's type never changes/),
      expect.stringMatching(/^the tenant has 2 applications named 'twice'/),
      "proxy 'p1' names application 'nowhere', which is neither in the file nor in the tenant",
      "proxy 'p2' names 'admin', a management application: a proxy acts as a public or private one",
    ]);
  });
});

describe('placeholders', () => {
  const env = { TOKEN: 'secret', EMPTY: '' };

  it('expands ${env:NAME}, keeps $${ as a literal ${, and refuses anything else', () => {
    const problems: string[] = [];
    expect(expandPlaceholders('Bearer ${env:TOKEN}${env:EMPTY}', env, (p) => problems.push(p))).toBe('Bearer secret');
    expect(expandPlaceholders('$${env:TOKEN} costs $5', env, (p) => problems.push(p))).toBe('${env:TOKEN} costs $5');
    expect(problems).toEqual([]);
    expandPlaceholders('${env:MISSING} ${TOKEN} ${env:bad-name} ${env:', env, (p) => problems.push(p));
    expect(problems).toEqual([
      '${env:MISSING}: the environment variable MISSING is not set',
      expect.stringMatching(/^'\$\{TOKEN\}' is not a placeholder/),
      expect.stringMatching(/^'\$\{env:bad-name\}' is not a placeholder/),
      expect.stringMatching(/^'\$\{env:' is not a placeholder/),
    ]);
  });

  it('escapes any value so that it reads back unchanged', () => {
    for (const value of ['plain', '${env:TOKEN}', '$${x}', 'a$$${b', '$', '${']) {
      const problems: string[] = [];
      expect(expandPlaceholders(escapePlaceholders(value), {}, (p) => problems.push(p))).toBe(value);
      expect(problems).toEqual([]);
    }
  });

  it('names variables after the proxy and the key, distinct from each other', () => {
    const taken = new Set<string>();
    expect(placeholderName('payments v2', 'api-key', taken)).toBe('GATEHOUSE_PAYMENTS_V2_API_KEY');
    expect(placeholderName('payments-v2', 'API_KEY', taken)).toBe('GATEHOUSE_PAYMENTS_V2_API_KEY_2');
    expect(placeholderName('??', '__proto__', taken)).toBe('GATEHOUSE_X_PROTO');
  });
});
