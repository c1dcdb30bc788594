import type { TestProject } from 'vitest/node';
import { startTestServers } from './test-servers.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    mariadbUrl: string;
    postgresUrl: string;
  }
}

/** Vitest global setup for integration tests: real servers for the run, gone after it. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const servers = await startTestServers();
  console.log(`test servers: MariaDB and PostgreSQL started in ${servers.startupMs} ms`);
  project.provide('mariadbUrl', servers.mariadb.url);
  project.provide('postgresUrl', servers.postgres.url);
  return () => servers.stop();
}
