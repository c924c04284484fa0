// https://developers.basistheory.com/docs/api/reactors/reactors
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: { body: null, headers: {} },
  configuration: { SERVICE_API_KEY: 'key_abcd1234' },
  code: `module.exports = async function (req) {
  const { SERVICE_API_KEY } = req.configuration;
  return { body: { raw: { foo: 'bar', keyLength: SERVICE_API_KEY.length } } };
};`,
};
