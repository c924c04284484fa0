// https://github.com/dchester/jsonpath
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: {
    body: {
      cards: [
        { number: '4242424242424242', brand: 'visa' },
        { number: '5555555555554444', brand: 'mc' },
      ],
    },
    headers: {},
  },
  configuration: {},
  code: `const jp = require('jsonpath');
module.exports = async function (req) {
  return { body: { last4s: jp.query(req.args.body, '$.cards[*].number').map((n) => n.slice(-4)), first: jp.value(req.args.body, '$.cards[0].brand') }, headers: {} };
};`,
};
