// https://github.com/panva/jose
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: { body: { number: '4242' }, headers: {} },
  configuration: {},
  code: `const jose = require('jose');
module.exports = async function (req) {
  const key = new Uint8Array(32).fill(7);
  const jwe = await new jose.CompactEncrypt(new TextEncoder().encode(JSON.stringify(req.args.body))).setProtectedHeader({ alg: 'dir', enc: 'A256GCM' }).encrypt(key);
  const { plaintext } = await jose.compactDecrypt(jwe, key);
  return { body: { parts: jwe.split('.').length, back: JSON.parse(new TextDecoder().decode(plaintext)) }, headers: {} };
};`,
};
