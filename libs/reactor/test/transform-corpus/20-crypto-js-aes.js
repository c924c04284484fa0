// https://www.npmjs.com/package/crypto-js
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: { body: { number: '4242424242424242' }, headers: {} },
  configuration: { AES_KEY: '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff' },
  code: `const CryptoJS = require('crypto-js');
module.exports = async function (req) {
  const key = CryptoJS.enc.Hex.parse(req.configuration.AES_KEY);
  const iv = CryptoJS.enc.Hex.parse('000102030405060708090a0b0c0d0e0f');
  const encrypted = CryptoJS.AES.encrypt(JSON.stringify(req.args.body), key, { iv }).toString();
  const back = CryptoJS.AES.decrypt(encrypted, key, { iv }).toString(CryptoJS.enc.Utf8);
  return { body: { encrypted, back: JSON.parse(back), md5: CryptoJS.MD5('x').toString() }, headers: {} };
};`,
};
