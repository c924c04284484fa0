// Lets a sandbox process started from the TypeScript sources (under Jest) load them: compiles each
// .ts file with @swc/core on require, with the project's .swcrc. Only used when the reactor itself
// runs from its sources (see childEntry in sandbox-process.ts); the built service runs dist/, where this file is not.
const fs = require('node:fs');
const path = require('node:path');
const swc = require('@swc/core');

const options = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', '.swcrc'), 'utf8'));
delete options.$schema;
options.sourceMaps = 'inline';

require.extensions['.ts'] = function compileTypeScript(module, filename) {
  const { code } = swc.transformSync(fs.readFileSync(filename, 'utf8'), { ...options, filename });
  module._compile(code, filename);
};
