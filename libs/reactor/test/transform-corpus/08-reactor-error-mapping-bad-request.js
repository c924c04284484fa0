// https://developers.basistheory.com/docs/api/reactors/reactor-errors
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: { body: { type: 'InvalidRequest' }, headers: {} },
  configuration: {},
  code: `const { BadRequestError } = require('@gatehouse/reactor-errors');
module.exports = async function (req) {
  throw new BadRequestError({ type: [req.args.body.type], nested: { reason: 'declined' } });
};`,
};
