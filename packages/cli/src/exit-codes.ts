/** A command that ran and failed (a query error, an unreachable server). */
export const EXIT_FAILED = 1;
/** A usage error: unknown command or option, missing argument, bad value. POSIX tools use 2. */
export const EXIT_USAGE = 2;
