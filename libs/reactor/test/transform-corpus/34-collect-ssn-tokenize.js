// https://developers.basistheory.com/docs/guides/collect/collect-inbound-sensitive-data
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: ['svc'],
  args: { body: { socialSecurityNumber: '555-44-5555' }, headers: {} },
  configuration: {},
  code: `module.exports = async function (req) {
  const token = await req.svc.tokens.create({ type: 'token', data: req.args.body.socialSecurityNumber });
  return { headers: req.args.headers, body: { ...req.args.body, socialSecurityNumber: token.id } };
};`,
};
