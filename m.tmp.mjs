// prints module count for importing a given specifier
import { registerHooks } from 'node:module';
let n = 0;
registerHooks({ load(url, ctx, next) { n++; return next(url, ctx); } });
const t = performance.now();
await import(process.argv[2]);
console.log(process.argv[2], n, 'modules', Math.round(performance.now() - t), 'ms');
