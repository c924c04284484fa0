// https://developers.basistheory.com/docs/card-payments/receive-cards-api
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  prepare: 'jws',
  args: { body: { amount: 10 }, headers: {} },
  configuration: {},
  code: `const jose = require('node-jose');
const { AuthenticationError } = require('@gatehouse/reactor-errors');
module.exports = async function (req) {
  const { headers, body } = req.args;
  try {
    const key = await jose.JWK.asKey(req.configuration.PUBLIC_KEY_PEM, 'pem');
    const result = await jose.JWS.createVerify(key).verify(headers['Authorization']);
    return { body: { ...body, caller: JSON.parse(result.payload.toString()).sub }, headers };
  } catch (error) {
    throw new AuthenticationError();
  }
};`,
};
