// https://developers.basistheory.com/docs/blueprints/personal-information/query-user-data-from-api
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: ['svc'],
  args: { body: { json: { ssn: 'tok_1' } }, headers: {} },
  configuration: {},
  code: `module.exports = async function (req) {
  const token = await req.svc.tokens.retrieve(req.args.body.json.ssn);
  return { body: { ssn: token.data }, headers: req.args.headers };
};`,
};
