// https://developers.basistheory.com/docs/card-payments/receive-cards-api
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: {
    body: '<Checkout><Amount>10</Amount><PaymentMethod><Number>4242424242424242</Number><ExpirationMonth>12</ExpirationMonth><ExpirationYear>2030</ExpirationYear><Cvc>123</Cvc></PaymentMethod></Checkout>',
    headers: { 'Content-Type': 'application/xml' },
  },
  configuration: {},
  code: `const { create } = require('xmlbuilder2');
module.exports = async function (req) {
  const object = create(req.args.body).end({ format: 'object' });
  const pm = object.Checkout.PaymentMethod;
  const masked = create({ ...object, Checkout: { ...object.Checkout, PaymentMethod: { Last4: pm.Number.slice(-4), ExpirationYear: pm.ExpirationYear } } }).end();
  return { body: masked, headers: req.args.headers };
};`,
};
