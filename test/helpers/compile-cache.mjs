// Preloaded by `npm test` and `npm run test:quick` before tsx. Every test file is a process of its
// own that compiles the same few hundred modules (the AWS SDK, zod, jose, the lambda rooms) again;
// V8's code cache on disk lets later files skip that. Node keys each entry by the module's path and a
// hash of its content in a directory per Node version, so a stale entry is never used. It stays on in
// this process only (the variable NODE_COMPILE_CACHE is not set), so a process a test spawns to
// measure or to run as deployed starts cold as before. Measured in docs/testing.md.
import module from 'node:module';

// Node 20 (the engines' floor, outside npm's scripts) has no code cache to enable.
module.enableCompileCache?.();
