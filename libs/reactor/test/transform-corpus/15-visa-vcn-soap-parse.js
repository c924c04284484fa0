// https://developers.basistheory.com/docs/card-issuing/issue-cards
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: {
    body: '<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body><ns2:getPurchaseRequestDetail xmlns:ns2="urn:x"><ns2:vcnInformation><ns2:Pan>4111111111111111</ns2:Pan><ns2:Expiry>3012</ns2:Expiry><ns2:Avv>123</ns2:Avv></ns2:vcnInformation></ns2:getPurchaseRequestDetail></S:Body></S:Envelope>',
    headers: {},
  },
  configuration: {},
  code: `const { create } = require('xmlbuilder2');
module.exports = async function (req) {
  const obj = create(req.args.body).end({ format: 'object' });
  const detail = obj['S:Envelope']?.['S:Body']?.['ns2:getPurchaseRequestDetail'];
  const vcn = detail?.['ns2:vcnInformation'];
  const expiry = vcn['ns2:Expiry'];
  return { body: { last4: vcn['ns2:Pan'].slice(-4), expiration_month: expiry.slice(-2), expiration_year: \`20\${expiry.slice(0, 2)}\` }, headers: {} };
};`,
};
