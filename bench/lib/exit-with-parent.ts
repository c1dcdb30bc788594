/**
 * Makes a benchmark child server exit once the process that started it is gone. The parent
 * kills its children on exit and on signals, but a parent killed outright (SIGKILL, OOM) cannot,
 * and an orphaned server would hold its port and its database pool forever. On Linux an orphan
 * is re-parented, so a changed `process.ppid` means the parent died.
 */
export function exitWithParent(onExit: () => void = () => process.exit(0)): void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(timer);
      onExit();
    }
  }, 1000);
  timer.unref();
}
