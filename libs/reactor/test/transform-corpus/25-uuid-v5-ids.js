// https://github.com/uuidjs/uuid
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: { body: { email: 'a@example.com' }, headers: {} },
  configuration: {},
  code: `const { v5, validate, version } = require('uuid');
module.exports = async function (req) {
  const id = v5(req.args.body.email, '6ba7b810-9dad-11d1-80b4-00c04fd430c8');
  return { body: { id, valid: validate(id), version: version(id) }, headers: {} };
};`,
};
