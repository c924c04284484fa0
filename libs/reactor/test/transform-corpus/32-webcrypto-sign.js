// https://developer.mozilla.org/en-US/docs/Web/API/SubtleCrypto/sign
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: { body: { x: 1 }, headers: {} },
  configuration: { SECRET: 's3cret' },
  code: `module.exports = async function (req) {
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(req.configuration.SECRET), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(JSON.stringify(req.args.body)));
  return { body: req.args.body, headers: { 'X-Mac': Buffer.from(mac).toString('hex') } };
};`,
};
