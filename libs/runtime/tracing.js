// Runtime entry of `@gatehouse/runtime/tracing`: loaded first by each process, apart from the package's index (which
// loads the database and Redis drivers the tracing must patch as they load).
module.exports = require('../../dist/libs/runtime/src/tracing.js');
