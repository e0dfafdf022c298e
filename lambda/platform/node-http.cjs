// Bundling only (lib/bundling.ts BUILTIN_ALIASES): `node:http` through require, which, unlike an ESM
// import, does not read every export and so does not load undici at cold start.
module.exports = require('http');
