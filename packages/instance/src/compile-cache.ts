import { flushCompileCache } from 'node:module';
import process from 'node:process';

/**
 * Writes this process's compile cache out before worker threads start, so that they find every
 * module this thread loaded compiled and type-stripped already. A worker that finds a module
 * there skips stripping its types; one that strips any loads Node's TypeScript stripper (a
 * WebAssembly module and its 3.8 MB bundle), some 30 MB resident per thread, for good. The
 * cache is shared with workers only when named in the environment (bin/replix.js does).
 */
export function shareCompileCache(): void {
  if (process.env.NODE_COMPILE_CACHE) flushCompileCache?.();
}
