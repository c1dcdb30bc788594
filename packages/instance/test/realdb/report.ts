/** Figures a real-database test measured (counts, times), printed in the test output. */
export function report(line: string): void {
  process.stdout.write(`[realdb] ${line}\n`);
}
