// https://developers.basistheory.com/docs/api/proxies/proxy-errors
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: { body: {}, headers: { 'MY-CUSTOM-API-KEY': 'abc123' } },
  configuration: {},
  code: `const { AuthenticationError } = require('@gatehouse/reactor-errors');
module.exports = async function (req) {
  const apiKey = req.args.headers['MY-CUSTOM-API-KEY'];
  if (!apiKey) throw new AuthenticationError('MY-CUSTOM-API-KEY header is required');
  return { headers: req.args.headers, body: { accepted: apiKey.length } };
};`,
};
