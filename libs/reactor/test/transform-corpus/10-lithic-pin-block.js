// https://developers.basistheory.com/docs/card-issuing/set-card-pin
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  prepare: 'rsaPem',
  args: { body: { pin: '4321' }, headers: {} },
  configuration: {},
  code: `const { Buffer } = require('buffer');
const forge = require('node-forge');
module.exports = (req) => {
  const { args: { body }, configuration: { LITHIC_PUB_KEY, TEST_PRIVATE_KEY } } = req;
  const publicKey = forge.pki.publicKeyFromPem(Buffer.from(LITHIC_PUB_KEY, 'base64').toString());
  const ciphertext = publicKey.encrypt(JSON.stringify({ nonce: 123456789, pin: body.pin }), 'RSA-OAEP', { md: forge.md.sha1.create(), mgf1: { md: forge.md.sha1.create() } });
  const pin_block = forge.util.encode64(ciphertext);
  // what the issuer would do with it: decrypt (the test's own key pair)
  const opened = forge.pki.privateKeyFromPem(TEST_PRIVATE_KEY).decrypt(forge.util.decode64(pin_block), 'RSA-OAEP', { md: forge.md.sha1.create(), mgf1: { md: forge.md.sha1.create() } });
  return { body: { pin_block_length: pin_block.length, opened: JSON.parse(opened) }, headers: {} };
};`,
};
