// https://developers.basistheory.com/docs/guides/process/extract-cards
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: ['refused'],
  note: 'tesseract.js needs WebAssembly and workers',
  args: { body: null, headers: {} },
  configuration: {},
  code: `const Tesseract = require('tesseract.js');
module.exports = async function () { return { body: typeof Tesseract.recognize, headers: {} }; };`,
};
