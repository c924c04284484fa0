// https://developers.basistheory.com/docs/api/proxies/pre-configured-proxies
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: { body: { amount: 42 }, headers: {} },
  configuration: { SIGNING_SECRET: 'whsec_test' },
  code: `const crypto = require('crypto');
module.exports = async function (req) {
  const { body, headers } = req.args;
  const timestamp = '1700000000';
  const payload = \`\${timestamp}.\${JSON.stringify(body)}\`;
  const signature = crypto.createHmac('sha256', req.configuration.SIGNING_SECRET).update(payload).digest('hex');
  return { body, headers: { ...headers, 'X-Timestamp': timestamp, 'X-Signature': signature } };
};`,
};
