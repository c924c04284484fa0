// https://developers.basistheory.com/docs/card-payments/receive-cards-api
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: {
    body: 'amount=100&paymentMethod%5Bnumber%5D=4242424242424242&paymentMethod%5Bcvc%5D=123',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  },
  configuration: {},
  code: `const querystring = require('querystring');
module.exports = async function (req) {
  const { 'paymentMethod[number]': number, 'paymentMethod[cvc]': cvc, ...rest } = querystring.parse(req.args.body);
  return { body: querystring.stringify({ ...rest, 'paymentMethod[last4]': number.slice(-4), 'paymentMethod[hasCvc]': String(Boolean(cvc)) }), headers: req.args.headers };
};`,
};
