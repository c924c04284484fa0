// https://github.com/panva/jose
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: { body: { last4: '4242' }, headers: {} },
  configuration: { JWT_SECRET: 'a-string-secret-at-least-256-bits-long' },
  code: `const jose = require('jose');
module.exports = async function (req) {
  const secret = new TextEncoder().encode(req.configuration.JWT_SECRET);
  const jwt = await new jose.SignJWT({ card: req.args.body.last4 }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt(1700000000).setExpirationTime(4102444800).sign(secret);
  return { body: req.args.body, headers: { Authorization: \`Bearer \${jwt}\` } };
};`,
};
