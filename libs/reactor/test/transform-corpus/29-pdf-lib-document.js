// https://developers.basistheory.com/docs/concepts/what-are-reactors
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: { body: { last4: '4242' }, headers: {} },
  configuration: {},
  code: `const { PDFDocument, StandardFonts } = require('pdf-lib');
module.exports = async function (req) {
  const doc = await PDFDocument.create();
  doc.setCreationDate(new Date(0)); doc.setModificationDate(new Date(0)); doc.setProducer('gatehouse'); doc.setCreator('gatehouse');
  const page = doc.addPage([200, 100]);
  page.drawText(\`Card ending \${req.args.body.last4}\`, { x: 10, y: 50, size: 8, font: await doc.embedFont(StandardFonts.Helvetica) });
  const bytes = await doc.save({ useObjectStreams: false });
  return { body: { pages: doc.getPageCount(), header: Buffer.from(bytes.slice(0, 8)).toString('latin1') }, headers: {} };
};`,
};
