export { main } from './main.ts';
export { createProgram, VERSION } from './program.ts';
