import { FieldErrorCollector } from '../shared/domain-error';
import { applyProxyPatch, ProxyInput, validateDestinationUrl } from './proxy';
import { anApplication, CODE, FakeDestinationPolicy, input, principal, setup, validationErrors } from '../testing/proxy-spec-fixtures';

describe('destination_url', () => {
  const check = (url: unknown, policy = new FakeDestinationPolicy()) => {
    const errors = new FieldErrorCollector();
    validateDestinationUrl(url, policy, errors);
    return errors.isEmpty;
  };

  const exactly400 = `https://api.example.com/${'a'.repeat(400 - 'https://api.example.com/'.length)}`;

  it.each([['https://api.example.com'], ['https://api.example.com:8443/v1/'], ['HTTPS://API.EXAMPLE.COM/v1'], ['a URL of exactly 400 characters', exactly400]])(
    'accepts %s',
    (label, url = label) => expect(check(url)).toBe(true),
  );

  it.each([
    undefined,
    '',
    'api.example.com',
    '/relative',
    'https:api.example.com',
    'https:/api.example.com',
    'http://api.example.com',
    'ftp://api.example.com',
    'javascript:alert(1)',
    'https://user:pw@api.example.com',
    'https://api.example.com/?q=1',
    'https://api.example.com/#frag',
    ' https://api.example.com',
    'https://api.example.com/a b',
    'https://127.0.0.1/',
    'https://[::1]/',
  ])('refuses %s', (url) => expect(check(url)).toBe(false));

  it('refuses a URL of 401 characters', () => expect(check(`${exactly400}a`)).toBe(false));

  it('accepts http:// only where the operator allows it', () => {
    expect(check('http://api.example.com', new FakeDestinationPolicy(true))).toBe(true);
  });
});

describe('ReplaceProxy', () => {
  it('returns omitted optional fields to their defaults and keeps the key; recompiles only changed code', async () => {
    const s = setup();
    const caller = principal();
    const priv = await anApplication(s.applications, caller.tenantId, 'private');
    const created = await s.create.execute(
      caller,
      input({ requestTransform: { code: CODE }, applicationId: priv.app.id, configuration: { A: 'b' }, requireAuth: false }),
    );
    s.clock.advance(1000);
    const compiledBefore = s.compiler.compiled.length;
    const same = await s.replace.execute(caller, created.id, input({ requestTransform: { code: CODE } }));
    expect(s.compiler.compiled.length).toBe(compiledBefore);
    expect(same).toMatchObject({ key: created.key, requestTransform: { code: CODE }, applicationId: null, configuration: null, requireAuth: true });
    const replaced = await s.replace.execute(caller, created.id, input({ name: 'renamed' }));
    expect(replaced).toEqual({
      ...created,
      name: 'renamed',
      requestTransform: null,
      applicationId: null,
      configuration: null,
      requireAuth: true,
      modifiedAt: s.clock.now(),
    });
    expect(s.uow.events.map((e) => e.operation)).toEqual(['create', 'update', 'update']);
  });

  it("is a NotFoundError for another tenant's proxy", async () => {
    const s = setup();
    const created = await s.create.execute(principal(), input());
    await expect(s.replace.execute(principal(), created.id, input())).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('PatchProxy and the merge patch', () => {
  it('applies RFC 7396 member by member', () => {
    const current: ProxyInput = {
      name: 'p',
      destinationUrl: 'https://a.example.com',
      requestTransform: { code: CODE },
      responseTransform: null,
      applicationId: 'app',
      configuration: { KEEP: '1', DROP: '2' },
      requireAuth: false,
    };
    expect(applyProxyPatch(current, {})).toEqual(current);
    expect(
      applyProxyPatch(current, {
        name: 'q',
        requestTransform: {},
        responseTransform: { code: 'new' },
        configuration: { DROP: null, ADD: '3' },
        requireAuth: null,
      }),
    ).toEqual({ ...current, name: 'q', responseTransform: { code: 'new' }, configuration: { KEEP: '1', ADD: '3' }, requireAuth: null });
    expect(applyProxyPatch(current, { requestTransform: { code: null }, applicationId: null, configuration: null })).toEqual({
      ...current,
      requestTransform: null,
      applicationId: null,
      configuration: null,
    });
  });

  it('keeps a configuration member named __proto__ as plain data, in a null-prototype map', () => {
    const patch = JSON.parse('{"__proto__": "x", "B": "y"}') as Record<string, string>;
    const merged = applyProxyPatch({ name: 'p', destinationUrl: 'https://a.example.com', configuration: null }, { configuration: patch });
    // Null prototype: an absent key such as toString reads as undefined, never as an Object.prototype member.
    expect(Object.getPrototypeOf(merged.configuration)).toBeNull();
    expect(merged.configuration!.toString).toBeUndefined();
    expect(Object.entries(merged.configuration!)).toEqual([
      ['__proto__', 'x'],
      ['B', 'y'],
    ]);
  });

  it('validates the merged result like a PUT body and changes nothing when it fails', async () => {
    const s = setup();
    const caller = principal();
    const created = await s.create.execute(caller, input({ configuration: { A: 'b' } }));
    expect(Object.keys(await validationErrors(s.patch.execute(caller, created.id, { name: null })))).toEqual(['name']);
    expect(Object.keys(await validationErrors(s.patch.execute(caller, created.id, { responseTransform: { code: 'SYNTAX ERROR' } })))).toEqual([
      'response_transform.code',
    ]);
    expect(s.proxies.all()).toEqual([created]);
    const patched = await s.patch.execute(caller, created.id, { requireAuth: false, configuration: { C: 'd' } });
    expect(patched).toMatchObject({ requireAuth: false, configuration: { A: 'b', C: 'd' }, key: created.key });
    expect(s.uow.events.map((e) => e.operation)).toEqual(['create', 'update']);
  });
});

describe('DeleteProxy, GetProxy, ListProxies', () => {
  it('scope everything to the caller tenant', async () => {
    const s = setup();
    const mine = principal();
    const theirs = principal();
    const proxy = await s.create.execute(mine, input());
    await expect(s.get.execute(theirs, proxy.id)).rejects.toMatchObject({ code: 'not_found' });
    expect((await s.list.execute(theirs, {}, { page: 1, size: 20 })).items).toEqual([]);
    await expect(s.remove.execute(theirs, proxy.id)).rejects.toMatchObject({ code: 'not_found' });
    expect(await s.get.execute(mine, proxy.id)).toEqual(proxy);
    await s.remove.execute(mine, proxy.id);
    await expect(s.get.execute(mine, proxy.id)).rejects.toMatchObject({ code: 'not_found' });
    expect(s.uow.events.map((e) => [e.operation, e.message])).toEqual([
      ['create', "Proxy 'payments' created"],
      ['delete', "Proxy 'payments' deleted"],
    ]);
  });
});
