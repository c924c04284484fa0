// https://developers.basistheory.com/docs/concepts/what-are-reactors
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: { body: { data: 'tok_123' }, headers: {} },
  configuration: {},
  code: `const PDFDocument = require('pdfkit');
module.exports = async function (req) {
  const doc = new PDFDocument({ info: { CreationDate: new Date(0) } });
  const chunks = [];
  doc.on('data', (c) => chunks.push(c));
  const done = new Promise((resolve) => doc.on('end', resolve));
  doc.fontSize(8).text(\`Some token data on a pdf: \${req.args.body.data}\`, 1, 1);
  doc.end();
  await done;
  const pdf = Buffer.concat(chunks);
  return { body: { header: pdf.slice(0, 8).toString('latin1'), ends: pdf.slice(-6).toString('latin1').trim() }, headers: {} };
};`,
};
