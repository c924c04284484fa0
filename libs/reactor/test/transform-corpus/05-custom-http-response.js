// https://developers.basistheory.com/docs/api/proxies/proxy-errors
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: { body: null, headers: {} },
  configuration: {},
  code: `const { CustomHttpResponseError } = require('@gatehouse/reactor-errors');
module.exports = async function () {
  throw new CustomHttpResponseError({ status: 400, headers: { 'Custom-Response-Header-1': 'custom-value-1' }, body: { myCustomError: 'My custom error message' } });
};`,
};
