// https://developers.basistheory.com/docs/card-payments/receive-cards-api
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: ['http'],
  args: { body: {}, headers: { Authorization: 'Bearer x' } },
  configuration: {},
  code: `const fetch = require('node-fetch');
const { AuthenticationError } = require('@gatehouse/reactor-errors');
module.exports = async function (req) {
  const response = await fetch('https://auth.example.invalid', { method: 'post', headers: { Authorization: req.args.headers['Authorization'] } });
  const { authenticated } = await response.json();
  if (!authenticated) throw new AuthenticationError();
  return { body: req.args.body, headers: req.args.headers };
};`,
};
