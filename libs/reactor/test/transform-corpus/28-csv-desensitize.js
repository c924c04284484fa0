// https://developers.basistheory.com/docs/concepts/what-are-reactors
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: { body: 'name,ssn\nTheory,555-44-5555\nBasis,111-22-3333\n', headers: {} },
  configuration: {},
  code: `const { parse } = require('csv-parse/sync');
module.exports = async function (req) {
  const rows = parse(req.args.body, { columns: true });
  return { body: rows.map((r) => ({ ...r, ssn: 'XXX-XX-' + r.ssn.slice(-4) })), headers: {} };
};`,
};
