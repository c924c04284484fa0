// https://developers.basistheory.com/docs/concepts/what-are-reactors
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: ['refused'],
  note: 'ssh2 opens raw TCP sockets',
  args: { body: null, headers: {} },
  configuration: {},
  code: `const { Client } = require('ssh2');
module.exports = async function () { return { body: typeof Client, headers: {} }; };`,
};
