// https://developers.basistheory.com/docs/api/proxies/pre-configured-proxies
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: { body: { a: 1 }, headers: { Accept: 'application/json' }, method: 'POST', path: '/charges', query: { page: '2' } },
  configuration: { MY_CONFIG: 'cfg' },
  code: `module.exports = async function (req) {
  const { args, configuration } = req;
  const { body, headers, method, path, query } = args;
  const { MY_CONFIG } = configuration;
  return { body: { ...body, seen: [method, path, query.page, MY_CONFIG].join(' ') }, headers: { ...headers, 'X-Seen': '1' } };
};`,
};
