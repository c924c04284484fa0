// https://docs.stripe.com/webhooks#verify-events
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  prepare: 'stripe',
  args: { body: '{"id":"evt_1","type":"charge.succeeded"}', headers: {} },
  configuration: { WHSEC: 'whsec_abc' },
  code: `const Stripe = require('stripe');
module.exports = async function (req) {
  const stripe = Stripe('sk_test_x');
  const event = stripe.webhooks.constructEvent(req.args.body, req.args.headers['stripe-signature'], req.configuration.WHSEC);
  return { body: { type: event.type, id: event.id }, headers: {} };
};`,
};
