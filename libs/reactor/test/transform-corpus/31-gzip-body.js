// https://nodejs.org/api/zlib.html
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: { body: { number: '4242424242424242' }, headers: {} },
  configuration: {},
  code: `const zlib = require('zlib');
module.exports = async function (req) {
  const packed = zlib.gzipSync(JSON.stringify(req.args.body));
  return { body: { gz: packed.toString('base64'), back: JSON.parse(zlib.gunzipSync(packed).toString()) }, headers: { 'Content-Encoding': 'identity' } };
};`,
};
