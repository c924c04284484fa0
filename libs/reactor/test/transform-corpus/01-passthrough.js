// https://developers.basistheory.com/docs/api/proxies/pre-configured-proxies
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: { body: { card: '4242' }, headers: { 'Content-Type': 'application/json' } },
  configuration: { SERVICE_API_KEY: 'key_abcd1234' },
  code: `module.exports = async function (req) {
  // the configuration is available to the transform (SERVICE_API_KEY)
  return { headers: req.args.headers, body: req.args.body };
};`,
};
