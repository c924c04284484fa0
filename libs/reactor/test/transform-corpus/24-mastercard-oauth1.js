// https://github.com/Mastercard/oauth1-signer-nodejs
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  prepare: 'rsaPemOnly',
  args: { body: { a: 1 }, headers: {} },
  configuration: {},
  code: `const oauth = require('mastercard-oauth1-signer');
module.exports = async function (req) {
  const header = oauth.getAuthorizationHeader('https://sandbox.api.mastercard.com/service', 'POST', JSON.stringify(req.args.body), 'consumer-key', req.configuration.SIGNING_KEY);
  const fields = Object.fromEntries(header.slice(6).split(',').map((p) => p.split('=')));
  return { body: { keys: Object.keys(fields).sort(), method: fields.oauth_signature_method, bodyHash: fields.oauth_body_hash }, headers: {} };
};`,
};
