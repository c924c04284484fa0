// https://developers.basistheory.com/docs/card-issuing/issue-cards
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: ['svc'],
  args: { body: { pan: '4242424242424242', exp_month: 12, exp_year: 2030, cvv: '123', token: 'lithic_1', state: 'OPEN' }, headers: {} },
  configuration: {},
  code: `module.exports = async function (req) {
  const { svc, args } = req;
  const { token: lithicToken, pan, exp_month, exp_year, cvv, ...rest } = args.body;
  const token = await svc.tokens.create({ id: lithicToken, type: 'card', data: { number: pan, expiration_month: exp_month, expiration_year: exp_year, cvc: cvv }, fingerprint_expression: '{{ data.number }}', deduplicate_token: true });
  return { headers: args.headers, body: { ...rest, token } };
};`,
};
