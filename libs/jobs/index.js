// Runtime entry of the workspace package: the compiled output of `npm run build` (tests and tsc use src/ directly).
module.exports = require('../../dist/libs/jobs/src/index.js');
