// https://developers.basistheory.com/docs/api/reactors/reactor-errors
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: { body: { type: 'CardError' }, headers: {} },
  configuration: {},
  code: `const { InvalidPaymentMethodError, RateLimitError, BadRequestError } = require('@gatehouse/reactor-errors');
module.exports = async function (req) {
  const err = { type: req.args.body.type };
  switch (err.type) {
    case 'CardError': throw new InvalidPaymentMethodError();
    case 'RateLimitError': throw new RateLimitError();
    default: throw new BadRequestError({ type: [err.type] });
  }
};`,
};
