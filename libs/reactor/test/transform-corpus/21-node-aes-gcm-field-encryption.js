// https://nodejs.org/api/crypto.html#cryptocreatecipherivalgorithm-key-iv-options
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: { body: { number: '4242424242424242', exp: '12/30' }, headers: {} },
  configuration: { KEY: '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff' },
  code: `const crypto = require('crypto');
module.exports = async function (req) {
  const key = Buffer.from(req.configuration.KEY, 'hex');
  const iv = Buffer.alloc(12, 1);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(req.args.body.number, 'utf8'), cipher.final()]);
  return { body: { ...req.args.body, number: Buffer.concat([iv, data, cipher.getAuthTag()]).toString('base64') }, headers: req.args.headers };
};`,
};
