#!/usr/bin/env node
// The project runs TypeScript directly on Node 24's type stripping; `npm ci` brings Node 24 as
// the `node` devDependency, and npm scripts and npx put it first on PATH.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(
    `replix needs Node.js 24 or newer (this is ${process.version}). Run it through npm or npx ` +
      'from the repository after `npm ci`, which brings Node.js 24.\n',
  );
  process.exit(1);
}
// Node keeps the compiled (and type-stripped) modules in its compile cache under the system's
// temporary directory: every later start of `replix` (and of each instance it runs) skips that.
const { enableCompileCache } = await import('node:module');
const cache = enableCompileCache?.();
// A cache enabled by this call is this thread's alone; named in the environment it is also every
// worker thread's (query threads, load workers), which then never load Node's TypeScript
// stripper, a WebAssembly module of some 30 MB resident per thread (see compile-cache.ts).
if (cache?.directory && process.env.NODE_COMPILE_CACHE === undefined)
  process.env.NODE_COMPILE_CACHE = cache.directory;
const { main } = await import('../src/main.ts');
process.exitCode = await main(process.argv);
