/**
 * What a database's endpoint answers (503 `service_unavailable`) while no instance serves it,
 * by the database's status: the action that brings it back.
 */
export function unroutedMessage(status: string): string {
  switch (status) {
    case 'paused':
      return 'The database is paused: resume it to serve queries.';
    case 'terminating':
    case 'terminated':
      return 'The database is terminated: provision it again to serve queries.';
    case 'failed':
      return "The database's deploy failed: its last error says why; redeploy or rebuild it to serve queries.";
    default:
      return 'The database has no running instance yet: it serves queries once its deploy finishes.';
  }
}
