// https://developers.basistheory.com/docs/guides/apple-pay/accept
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: {
    body: {
      paymentData:
        'eyJ2ZXJzaW9uIjoiRUNfdjEiLCJzaWduYXR1cmUiOiJBQUVDQXdRPSIsImhlYWRlciI6eyJlcGhlbWVyYWxQdWJsaWNLZXkiOiJ4IiwicHVibGljS2V5SGFzaCI6InkiLCJ0cmFuc2FjdGlvbklkIjoieiJ9fQ==',
    },
    headers: {},
  },
  configuration: {},
  code: `const { Buffer } = require('buffer');
module.exports = async function (req) {
  const token = JSON.parse(Buffer.from(req.args.body.paymentData, 'base64').toString('utf8'));
  return { body: { version: token.version, signatureBytes: Buffer.from(token.signature, 'base64').length, header: Object.keys(token.header).sort() }, headers: {} };
};`,
};
