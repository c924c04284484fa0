// https://developers.basistheory.com/docs/guides/process/analyze-data
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: { body: [{ date_of_birth: '1990-05-01' }, { date_of_birth: '1970-01-31' }], headers: {} },
  configuration: {},
  code: `module.exports = async function (req) {
  const now = new Date('2026-01-01T00:00:00Z');
  const ages = req.args.body.map((user) => Math.floor((now - new Date(user.date_of_birth).getTime()) / 3.15576e10));
  return { body: { averageAge: ages.reduce((a, b) => a + b) / ages.length }, headers: {} };
};`,
};
