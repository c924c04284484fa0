import { ExpressionFailure } from '@gatehouse/domain';
import { LiquidExpressionEngine } from './liquid-expression-engine';

describe('LiquidExpressionEngine', () => {
  const engine = new LiquidExpressionEngine();
  const card = { data: { number: '3622720627165567', expiration_month: 10, expiration_year: 2028 } };

  it.each([
    ['{{ data | reveal_last: 6 }}', { data: '36227206271667' }, 'XXXXXXXX271667'],
    ["{{ data | reveal_last: 3, '#' }}", { data: '36227206271667' }, '###########667'],
    ['{{ data | reveal_last: 4 }}', { data: '123-45-6789' }, 'XXX-XX-6789'],
    ['{{ data | reveal: 6 }}', { data: '3622-7206-2716-5567' }, '3622-7XXXXXXXXXXXXX'],
    ['{{ data | reveal: 7, 5 }}', { data: '3622-7206-2716-5567' }, '3622-72XXXXXXX-5567'],
    ["{{ data | reveal: 7, 4, '#', '-' }}", { data: '3622-7206-2716-5567' }, '3622-72##-####-5567'],
    ['{{ data | reveal: 10, 9 }}', { data: '3622-7206-2716-5567' }, 'XXXXXXXXXXXXXXXXXXX'],
    ['{{ data.number | last4 }}', card, '5567'],
    ['{{ data.number | slice: 0, 6 }}', card, '362272'],
    ["{{ data.number | card_mask: 'true', 'true' }}", card, '36227206XXXX5567'],
    ['{{ data | stringify }}', { data: { a: [1, 'b'] } }, '{"a":[1,"b"]}'],
    ["{{ data | json: '$.bicycle.color' }}", { data: { bicycle: { color: 'red' } } }, 'red'],
    [
      "{{ data | json: '$.books[?(@.price < 10)].title' }}",
      {
        data: {
          books: [
            { title: 'Moby Dick', price: 8.99 },
            { title: 'LOTR', price: 22.99 },
          ],
        },
      },
      'Moby Dick',
    ],
    ['{{ data.name | split: " " | last | upcase }}', { data: { name: 'John Doe' } }, 'DOE'],
    ['{{ data | downcase }}', { data: 'ABC' }, 'abc'],
    ["{{ data | remove: '-' }}", { data: '123-45-6789' }, '123456789'],
  ])('%s', async (template, scope, expected) => {
    expect(await engine.render(template, scope)).toBe(expected);
  });

  it('aliases keep the format and the revealed characters', async () => {
    const format = await engine.render('{{ data | alias_preserve_format: 3, 5 }}', { data: 'ABC12345DEF67890' });
    expect(format).toMatch(/^ABC[0-9]{5}[a-z]{3}67890$/);
    const length = await engine.render('{{ data | alias_preserve_length: 0, 4 }}', { data: 'abc-12345' });
    expect(length).toMatch(/^[a-z0-9]{5}2345$/);
    const alias = await engine.render("{{ data | alias_card: 'true', 'true' }}", { data: '3622-7206-2716-5567' });
    expect(alias).toMatch(/^3622-7206-[0-9]{4}-5567$/);
  });

  it('evaluates one expression to its value', async () => {
    expect(await engine.evaluate('data.expiration_month', card)).toBe(10);
    expect(await engine.evaluate("data | json: '$.a'", { data: { a: { b: 1 } } })).toEqual({ b: 1 });
    expect(await engine.evaluate('data.missing', card)).toBeNull();
  });

  it('fails with a message naming the problem, never the data', async () => {
    const failures = [
      engine.render('{{ data | no_such_filter }}', { data: 'secret-value' }),
      engine.render("{{ data | json: '$..a' }}", { data: { a: 'secret-value', b: { a: 'secret-value' } } }),
      engine.render('{{ data | reveal_last: -1 }}', { data: 'secret-value' }),
      engine.render("{% include 'secrets' %}", { data: 'secret-value' }),
      engine.render("{% render '/etc/passwd' %}", { data: 'secret-value' }),
      engine.render('{% layout "x" %}', { data: 'secret-value' }),
      engine.render('{{ data', { data: 'secret-value' }),
    ];
    for (const failure of failures) {
      const error = await failure.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ExpressionFailure);
      expect((error as Error).message).not.toContain('secret-value');
    }
  });

  it('bounds template size, render time and output', async () => {
    const small = new LiquidExpressionEngine({ maxTemplateLength: 100, renderTimeMs: 50, maxOutputLength: 1000 });
    await expect(small.render(`{{ data }}${' '.repeat(200)}`, { data: 'x' })).rejects.toThrow(ExpressionFailure);
    await expect(small.render('{% for i in (1..100000000) %}{% endfor %}', {})).rejects.toThrow(ExpressionFailure);
    await expect(small.render('{% for i in (1..500) %}xxxx{% endfor %}', {})).rejects.toThrow(ExpressionFailure);
  });

  it("shares one budget of work between a request's expressions (shared()), each still bounded alone", async () => {
    // 30,000 characters split, sorted and joined 5 times: about 450,000 units of liquidjs's 1,048,576 for one expression.
    const data = 'x'.repeat(30_000);
    const heavy = `data ${'| split: "" | sort | join: "" '.repeat(5)}| size`;
    for (let i = 0; i < 20; i++) await expect(engine.evaluate(heavy, { data })).resolves.toBe(30_000);
    const request = engine.shared();
    // A request's budget is 8 x 1,048,576 units: 18 of them fit in it, the 19th does not.
    for (let i = 0; i < 18; i++) await expect(request.evaluate(heavy, { data })).resolves.toBe(30_000);
    await expect(request.evaluate(heavy, { data })).rejects.toThrow('memory alloc limit exceeded');
    await expect(request.render(`{{ ${heavy} }}`, { data })).rejects.toThrow('memory alloc limit exceeded');
    // Another request has its budget; the service's engine none; one expression is still bounded alone.
    await expect(engine.shared().render(`{{ ${heavy} }}`, { data })).resolves.toBe('30000');
    await expect(engine.evaluate(heavy, { data })).resolves.toBe(30_000);
    await expect(engine.shared().evaluate(`data ${'| split: "" | sort | join: "" '.repeat(12)}| size`, { data })).rejects.toThrow(
      'memory alloc limit exceeded',
    );
  });
});
