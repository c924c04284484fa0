// https://developers.basistheory.com/docs/card-issuing/set-card-pin
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: { body: { pin: '1234' }, headers: { 'Content-Type': 'application/json' } },
  configuration: { MARQETA_APPLICATION_TOKEN: 'app', MARQETA_ADMIN_ACCESS_TOKEN: 'admin' },
  code: `const { Buffer } = require('buffer');
module.exports = (req) => {
  const { args: { headers, body }, configuration: { MARQETA_APPLICATION_TOKEN, MARQETA_ADMIN_ACCESS_TOKEN } } = req;
  const auth = new Buffer.from(\`\${MARQETA_APPLICATION_TOKEN}:\${MARQETA_ADMIN_ACCESS_TOKEN}\`).toString('base64');
  return { body, headers: { ...headers, Authorization: \`Basic \${auth}\` } };
};`,
};
