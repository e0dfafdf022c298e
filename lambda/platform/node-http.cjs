// Bundling only (lib/bundling.ts BUNDLE_ALIASES): `node:http` through require, which, unlike an ESM
// import, does not read every export and so does not load undici at cold start.
// The bare name is deliberate: the bundle aliases `node:http` to this very file, so requiring
// `node:http` here would require itself and export nothing.
// biome-ignore lint/style/useNodejsImportProtocol: see above
module.exports = require('http');
