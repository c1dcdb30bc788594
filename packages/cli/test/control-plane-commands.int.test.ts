import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { BuiltInIssuer } from '@replix/control-plane/config';
import { freePort, type TestDatabase } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startTestControlPlane,
  type TestControlPlane,
} from '../../control-plane/test/control-plane-harness.ts';

const run = promisify(execFile);
const bin = fileURLToPath(new URL('../bin/replix.js', import.meta.url));

const SOURCE_SQL = `
  CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL);
  INSERT INTO customers VALUES (1, 'Ada'), (2, 'Grace');`;
const USER = 'rx_cli';
const PASSWORD = 'cli-Pa$$word';
/** A MariaDB user without a password. */
const NO_PASSWORD_USER = 'rx_cli_nopass';

/** Where `npx replix` finds the CLI, as in a project that installed it. */
const REPOSITORY_ROOT = fileURLToPath(new URL('../../..', import.meta.url));

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The control-plane commands of the real CLI (a child process, through @replix/client) against
 * a control plane started here with every role, and a database on the harness's MariaDB.
 */
describe('replix commands over the control-plane API', () => {
  let cp: TestControlPlane;
  let source: TestDatabase;
  let sourceUrl: URL;
  let connectionId: string;
  let databaseId: string;

  async function replix(args: string[], env: Record<string, string> = {}): Promise<Result> {
    try {
      const { stdout, stderr } = await run(process.execPath, [bin, ...args], {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          REPLIX_DATA_DIR: cp.dataDir,
          REPLIX_API_URL: cp.url,
          ...env,
        },
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  }
  async function json(args: string[]) {
    const result = await replix([...args, '--json']);
    expect(result, args.join(' ')).toMatchObject({ code: 0, stderr: '' });
    return JSON.parse(result.stdout);
  }
  const credentials = () => [
    '--host',
    sourceUrl.hostname,
    '--port',
    sourceUrl.port,
    '--user',
    USER,
    '--password',
    PASSWORD,
  ];

  beforeAll(async () => {
    source = await testMariaDb().createDatabase(SOURCE_SQL);
    sourceUrl = new URL(source.url);
    await testMariaDb().exec(
      `DROP USER IF EXISTS '${USER}'@'%'; CREATE USER '${USER}'@'%' IDENTIFIED BY '${PASSWORD}'; GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '${USER}'@'%'`,
    );
    await testMariaDb().exec(
      `DROP USER IF EXISTS '${NO_PASSWORD_USER}'@'%'; CREATE USER '${NO_PASSWORD_USER}'@'%'; GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '${NO_PASSWORD_USER}'@'%'`,
    );
    cp = await startTestControlPlane('pglite', {
      roles: ['api', 'reconciler', 'builder', 'health-monitor'],
    });
  });
  afterAll(async () => {
    await cp?.close();
    await source?.drop();
    await testMariaDb().exec(`DROP USER IF EXISTS '${USER}'@'%'`);
    await testMariaDb().exec(`DROP USER IF EXISTS '${NO_PASSWORD_USER}'@'%'`);
  });

  it('asks to log in first', async () => {
    const result = await replix(['connections', 'list']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'replix connections list: not logged in: run `replix login --email <you@example.com>` (or set REPLIX_TOKEN).\n',
    );
  });

  it('logs in with the built-in issuer and saves the token readable by the user only', async () => {
    const result = await replix(['login', '--email', 'cli@example.com']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const path = join(cp.dataDir, 'credentials.json');
    expect(result.stdout).toBe(
      `Logged in to ${cp.url} as cli@example.com; token saved in ${path}.\n`,
    );
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(readFileSync(path, 'utf8'));
    expect(saved).toEqual({ apiUrl: cp.url, token: expect.stringMatching(/^ey/) });
    // The saved token works against the API.
    expect((await cp.request('GET', '/v1/connections', { token: saved.token })).status).toBe(200);
  });

  it('checks the token before saying it logged in: another data folder, or no control plane', async () => {
    const otherDir = mkdtempSync(join(tmpdir(), 'replix-other-data-'));
    const unusedDir = mkdtempSync(join(tmpdir(), 'replix-unused-data-'));
    try {
      // A folder no control plane has run on has no key: nothing is signed, and none is made.
      for (const command of [['login'], ['token'], ['login-link']]) {
        const unused = await replix([...command, '--email', 'cli@example.com'], {
          REPLIX_DATA_DIR: unusedDir,
        });
        expect(unused.code).toBe(1);
        expect(unused.stdout).toBe('');
        expect(unused.stderr).toBe(
          `replix ${command[0]}: no control plane has run on the data folder ${unusedDir} (it has no signing key). Set REPLIX_DATA_DIR to the folder the running control plane uses (the "data folder" line of npm start), or start it first.\n`,
        );
      }
      expect(existsSync(join(unusedDir, 'issuer'))).toBe(false);

      // Another control plane's data folder: its own key, which this control plane refuses.
      await BuiltInIssuer.open(otherDir);
      const refused = await replix(['login', '--email', 'cli@example.com'], {
        REPLIX_DATA_DIR: otherDir,
      });
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toBe(
        `replix login: ${cp.url} refused a token signed with the key of ${otherDir}: it runs with another data folder. Run this with REPLIX_DATA_DIR set to the folder the control plane uses.\n`,
      );
      expect(existsSync(join(otherDir, 'credentials.json'))).toBe(false);
      // The API's own refusal says the same, for a token made with `replix token` elsewhere.
      const token = (
        await replix(['token', '--email', 'cli@example.com'], { REPLIX_DATA_DIR: otherDir })
      ).stdout.trim();
      const answer = await cp.request('GET', '/v1/connections', { token });
      expect(answer.status).toBe(401);
      expect(answer.body.message).toContain('signed with the key of another data folder');

      const down = `http://127.0.0.1:${await freePort()}`;
      const unchecked = await replix(['login', '--email', 'cli@example.com', '--api-url', down]);
      expect(unchecked.code).toBe(1);
      expect(unchecked.stdout).toBe('');
      expect(unchecked.stderr).toContain(`but ${down} did not answer, so it is not checked`);
    } finally {
      rmSync(otherDir, { recursive: true, force: true });
      rmSync(unusedDir, { recursive: true, force: true });
      // The unchecked login saved its token in the shared data folder: the next tests log in again.
      await replix(['login', '--email', 'cli@example.com']);
    }
  });

  it('rejects login without --email or --token as a usage error', async () => {
    const result = await replix(['login']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('give either --email <email> or --token <jwt>');
  });

  it('prints a one-time dashboard link that signs in once', async () => {
    const result = await replix(['login-link', '--email', 'Browser@Example.com'], {
      REPLIX_PUBLIC_URL: cp.url,
    });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const link = new URL(result.stdout.trim());
    expect(`${link.origin}${link.pathname}`).toBe(`${cp.url}/sign-in`);
    const code = link.hash.replace('#link=', '');
    const first = await cp.request('POST', '/v1/auth/login-links/redeem', { body: { code } });
    const account = await cp.request('GET', '/v1/account', { token: first.body.token });
    expect(account.body.user.email).toBe('browser@example.com');
    const second = await cp.request('POST', '/v1/auth/login-links/redeem', { body: { code } });
    expect(second.status).toBe(404);
  });

  it('refuses a login link without a valid --email as a usage error', async () => {
    expect((await replix(['login-link'])).code).toBe(2);
    const bad = await replix(['login-link', '--email', 'nobody']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--email must be an email address');
  });

  it('tests credentials: ok with the schemas, and exit 1 with the reason when refused', async () => {
    const ok = await replix(['connections', 'test', ...credentials()]);
    expect(ok).toMatchObject({ code: 0, stderr: '' });
    expect(ok.stdout).toMatch(/^ok: +true$/m);
    expect(ok.stdout).toContain(source.name);
    const body = await json(['connections', 'test', ...credentials()]);
    expect(body).toMatchObject({ ok: true, binlog: { ready: true } });

    const refused = await replix([
      'connections',
      'test',
      ...credentials().slice(0, -1),
      'wrong-password',
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/^ok: +false$/m);
    expect(refused.stderr).toMatch(/^replix connections test: the connection test failed: .+\n$/);
  });

  it('creates and lists a connection, never showing the password', async () => {
    const created = await json(['connections', 'create', '--name', 'shop', ...credentials()]);
    expect(created).toMatchObject({
      name: 'shop',
      hasPassword: true,
      port: Number(sourceUrl.port),
      lastTest: { ok: true, binlog: { ready: true } },
    });
    connectionId = created.id;
    const plain = await replix(['connections', 'create', '--name', 'shop2', ...credentials()]);
    expect(plain).toMatchObject({ code: 0, stderr: '' });
    expect(plain.stdout).toMatch(
      /^Created connection [0-9a-f-]{36} \(shop2\): test ok, change log ready\.\n$/,
    );
    const table = await replix(['connections', 'list']);
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(
      /^id +name +backend +host +port +user +defaultRegion$/,
    );
    expect(table.stdout).toContain(connectionId);
    expect(table.stdout + JSON.stringify(await json(['connections', 'list']))).not.toContain(
      PASSWORD,
    );
  });

  // Eleven CLI runs, each a fresh Node process loading the CLI: minutes on a loaded CI machine.
  it('refuses to save a connection whose test fails, unless --skip-test', async () => {
    const before = (await json(['connections', 'list'])).length;
    const wrong = [...credentials().slice(0, -1), 'wrong-password'];
    const refused = await replix(['connections', 'create', '--name', 'wrong', ...wrong]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/^failedCheck: +login$/m);
    expect(refused.stderr).toBe(
      'replix connections create: the connection test failed (login): Authentication to the source database failed. Nothing was saved: fix the settings, or save it anyway with --skip-test.\n',
    );
    expect((await json(['connections', 'list'])).length).toBe(before);

    const saved = await json(['connections', 'create', '--name', 'wrong', ...wrong, '--skip-test']);
    expect(saved).toMatchObject({ name: 'wrong', lastTest: null });
    const checked = await replix(['connections', 'check', saved.id]);
    expect(checked.code).toBe(1);
    expect(checked.stdout).toMatch(/^failedCheck: +login$/m);
    expect(checked.stderr).toBe(
      'replix connections check: the connection test failed: Authentication to the source database failed.\n',
    );
    const plainSkip = await replix([
      'connections',
      'create',
      '--name',
      'wrong2',
      ...wrong,
      '--skip-test',
    ]);
    expect(plainSkip.stdout).toMatch(/: saved untested \(--skip-test\)\.\n$/);

    // update: a wrong password is refused the same way; the right one is tested and kept.
    const stillWrong = await replix(['connections', 'update', saved.id, '--password', 'nope']);
    expect(stillWrong.code).toBe(1);
    expect(stillWrong.stderr).toMatch(/the connection test failed \(login\)/);
    const fixed = await replix(['connections', 'update', saved.id, '--password', PASSWORD]);
    expect(fixed).toEqual({
      code: 0,
      stdout: `Updated connection ${saved.id} (wrong).\n`,
      stderr: '',
    });
    const shown = await json(['connections', 'get', saved.id]);
    expect(shown).toMatchObject({ id: saved.id, lastTest: { ok: true } });
    expect(await json(['connections', 'check', saved.id])).toMatchObject({
      ok: true,
      availableSchemas: expect.arrayContaining([source.name]),
    });
    const fields = await replix(['connections', 'get', saved.id]);
    expect(fields.stdout).toMatch(/^hasPassword: +true$/m);
    expect(fields.stdout).not.toContain(PASSWORD);
    expect((await replix(['connections', 'update', saved.id])).stderr).toMatch(/nothing to change/);
    const sshWithoutUser = await replix(['connections', 'update', saved.id, '--ssh-host', 'b']);
    expect(sshWithoutUser).toMatchObject({
      code: 1,
      stderr:
        'replix connections update: --ssh-host needs --ssh-user (and --ssh-key, unless the stored key stays).\n',
    });
    expect(await json(['connections', 'update', saved.id, '--no-ssh'])).toMatchObject({
      ssh: null,
      lastTest: { ok: true },
    });

    for (const id of [saved.id, plainSkip.stdout.split(' ')[2]]) {
      const deleted = await replix(['connections', 'delete', id as string]);
      expect(deleted).toEqual({ code: 0, stdout: `Deleted connection ${id}.\n`, stderr: '' });
    }
    const gone = await replix(['connections', 'get', saved.id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/^replix connections get: not_found: /);
  }, 150_000);

  it('saves a user without a password with --no-password, and asks which one otherwise', async () => {
    const host = ['--host', sourceUrl.hostname, '--port', sourceUrl.port];
    const missing = await replix([
      'connections',
      'create',
      '--name',
      'np',
      ...host,
      '--user',
      NO_PASSWORD_USER,
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(
      'replix connections create: give the source password with --password or REPLIX_SOURCE_PASSWORD, or --no-password for a user without one.\n',
    );
    const created = await json([
      'connections',
      'create',
      '--name',
      'no password',
      ...host,
      '--user',
      NO_PASSWORD_USER,
      '--no-password',
    ]);
    expect(created).toMatchObject({ hasPassword: false, lastTest: { ok: true } });
    const raw = await replix([
      'connections',
      'test',
      ...host,
      '--user',
      NO_PASSWORD_USER,
      '--no-password',
    ]);
    expect(raw.code).toBe(1);
    expect(raw.stderr).toMatch(/--no-password` tests a user without one before saving it/);
    const checked = await replix(['connections', 'check', created.id]);
    expect(checked).toMatchObject({ code: 0, stderr: '' });
    expect(checked.stdout).toMatch(/^ok: +true$/m);
    expect((await replix(['connections', 'delete', created.id])).code).toBe(0);
  });

  it('creates, lists and shows a database', async () => {
    const plain = await replix([
      'databases',
      'create',
      '--name',
      'shop-db',
      '--connection',
      connectionId,
      '--source-schema',
      source.name,
      '--sync-mode',
      'poll',
      '--sync-interval',
      '60', // the free plan's shortest poll interval
    ]);
    expect(plain).toMatchObject({ code: 0, stderr: '' });
    const match = /^Created database ([0-9a-f-]{36}) \(shop-db\), draft\.\n$/.exec(plain.stdout);
    expect(match, plain.stdout).not.toBeNull();
    databaseId = match?.[1] as string;

    const list = await replix(['databases', 'list']);
    expect(list.stdout).toMatch(
      new RegExp(`^${databaseId} +shop-db +draft +${source.name} +xs`, 'm'),
    );
    expect(await json(['databases', 'list'])).toEqual([
      expect.objectContaining({ id: databaseId, status: 'draft' }),
    ]);
    expect(await json(['databases', 'get', databaseId])).toMatchObject({
      id: databaseId,
      connectionId,
      syncMode: 'poll',
    });
    const fields = await replix(['databases', 'get', databaseId]);
    expect(fields.stdout).toMatch(/^status: +draft$/m);
    // Not deployed yet: no endpoint.
    expect(fields.stdout).toMatch(/^endpointUrl: +null$/m);
  });

  it('sets read replicas on create and changes them by a resize, within the plan', async () => {
    expect(await json(['databases', 'get', databaseId])).toMatchObject({ replicas: 1 });
    const overPlan = await replix([
      'databases',
      'create',
      '--name',
      'too-many',
      '--connection',
      connectionId,
      '--source-schema',
      source.name,
      '--replicas',
      '2',
    ]);
    expect(overPlan).toMatchObject({
      code: 1,
      stdout: '',
      stderr:
        "replix databases create: plan_limit: 2 replicas are above the free plan's most, 1; upgrade to use them.\n",
    });
    // A replica count is a resize: a draft has nothing to resize yet.
    const draft = await replix(['databases', 'update', databaseId, '--replicas', '2']);
    expect(draft.code).toBe(1);
    expect(draft.stderr).toMatch(
      /^replix databases update: action_not_allowed: Resize needs a running, paused or failed database; this one is draft/,
    );
    expect(await replix(['databases', 'update', databaseId, '--replicas', '0'])).toMatchObject({
      code: 1,
      stderr: 'replix databases update: --replicas must be a whole number of at least 1.\n',
    });
    // Neither --size nor --replicas: a usage error, as a missing option is.
    const neither = await replix(['db', 'resize', databaseId]);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toMatch(
      /^error: name what to change: --size <size>, --replicas <n> or both\.\n\nUsage: replix databases resize/,
    );
  });

  it('prints an action the status does not allow as the API error and exits 1', async () => {
    const result = await replix(['db', 'resume', databaseId]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    // The refusal names the action to use instead, and the command that does it.
    expect(result.stderr).toBe(
      `replix db resume: action_not_allowed: Resume needs a paused database; this one is draft: use Provision instead. Run: replix db provision ${databaseId}\n`,
    );
  });

  it('prints not_found for an unknown id and unauthorized for a bad REPLIX_TOKEN', async () => {
    const missing = await replix(['databases', 'get', randomUUID()]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^replix databases get: not_found: .+\n$/);
    const bad = await replix(['databases', 'list'], { REPLIX_TOKEN: 'not-a-token' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^replix databases list: unauthorized: .+\n$/);
  });

  it('treats a missing or invalid option as a usage error (exit 2)', async () => {
    expect((await replix(['db', 'resize', databaseId])).code).toBe(2);
    expect((await replix(['db', 'resize', databaseId, '--size', 'huge'])).code).toBe(2);
    expect((await replix(['keys', 'create', databaseId])).code).toBe(2);
  });

  it('creates, lists and deletes API keys', async () => {
    const created = await replix(['keys', 'create', databaseId, '--name', 'reader']);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const keyId = /^Created API key ([0-9a-f]{16}) \(reader\)/.exec(created.stdout)?.[1];
    expect(keyId, created.stdout).toBeDefined();
    expect(created.stdout).toMatch(new RegExp(`^rxk_${keyId}\\.\\S+$`, 'm'));

    const list = await replix(['keys', 'list', databaseId]);
    expect(list.stdout).toMatch(new RegExp(`^${keyId} +reader +rxk_${keyId} `, 'm'));
    expect(list.stdout).not.toMatch(/rxk_[0-9a-f]{16}\./);
    expect(list.stdout).toMatch(new RegExp(`^${keyId} +reader +rxk_${keyId} +query `, 'm'));

    const deleted = await replix(['keys', 'delete', databaseId, keyId as string]);
    expect(deleted).toEqual({ code: 0, stdout: `Deleted API key ${keyId}.\n`, stderr: '' });
    expect(await json(['keys', 'list', databaseId])).toEqual([]);
    const again = await replix(['keys', 'delete', databaseId, keyId as string]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^replix keys delete: not_found: /);
  });

  it('creates admin keys with --admin, with a warning, and lists their scope', async () => {
    const created = await replix(['keys', 'create', databaseId, '--name', 'ops', '--admin']);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const keyId =
      /^Created API key ([0-9a-f]{16}) \(ops\), an admin key: keep it on servers, never in a browser or app\. It is shown only now:$/m.exec(
        created.stdout,
      )?.[1];
    expect(keyId, created.stdout).toBeDefined();
    expect(created.stdout).toMatch(new RegExp(`^rxk_${keyId}\\.\\S+$`, 'm'));

    const list = await replix(['keys', 'list', databaseId]);
    expect(list.stdout).toMatch(/ +scope +/);
    expect(list.stdout).toMatch(new RegExp(`^${keyId} +ops +rxk_${keyId} +admin `, 'm'));
    const listed = (await json(['keys', 'list', databaseId])) as Array<{
      keyId: string;
      scope: string;
    }>;
    expect(listed.find((key) => key.keyId === keyId)?.scope).toBe('admin');
    const web = (await json(['keys', 'create', databaseId, '--name', 'web'])) as {
      keyId: string;
      scope: string;
    };
    expect(web.scope).toBe('query');
    for (const id of [keyId as string, web.keyId]) {
      expect((await replix(['keys', 'delete', databaseId, id])).code).toBe(0);
    }
  });

  it('provisions, lists the build and prints its log', async () => {
    const provision = await replix(['db', 'provision', databaseId]);
    expect(provision).toEqual({
      code: 0,
      stdout: `provision ${databaseId}: status building\n`,
      stderr: '',
    });
    let builds: Array<{ id: string; status: string }> = [];
    const deadline = Date.now() + 60_000;
    while (builds[0]?.status !== 'succeeded') {
      expect(builds[0]?.status, 'the build failed').not.toBe('failed');
      expect(Date.now(), 'the build did not finish').toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 250));
      builds = await json(['builds', 'list', databaseId]);
    }
    const buildId = builds[0]?.id as string;
    const table = await replix(['builds', 'list', databaseId]);
    expect(table.stdout).toMatch(new RegExp(`^${buildId} +succeeded `, 'm'));

    const log = await replix(['logs', 'build', buildId, '--follow']);
    expect(log).toMatchObject({ code: 0, stderr: '' });
    const lines = log.stdout.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z {2}\S/);
    const jsonLines = (await replix(['logs', 'build', buildId, '--json'])).stdout.trimEnd();
    expect(jsonLines.split('\n').map((line) => JSON.parse(line))).toHaveLength(lines.length);
    // The deploy's log drains without --follow (whatever the deploy has written so far).
    expect(await replix(['logs', 'infra', databaseId])).toMatchObject({ code: 0, stderr: '' });
  });

  it('shows where a database answers and the replix query line that works there', async () => {
    let shown: { status: string; endpointUrl: string | null; query: string | null } = {
      status: '',
      endpointUrl: null,
      query: null,
    };
    const deadline = Date.now() + 60_000;
    // The table in the line comes from the instance's row counts, which the health monitor reads.
    while (shown.status !== 'running' || !shown.query || shown.query.includes('<table>')) {
      expect(shown.status, 'the deploy failed').not.toBe('failed');
      expect(Date.now(), 'the database did not start').toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 250));
      shown = await json(['databases', 'show', databaseId]);
    }
    expect(shown).toMatchObject({
      id: databaseId,
      name: 'shop-db',
      latestBuild: { status: 'succeeded', finishedAt: expect.any(String) },
      query: `npx replix query ${shown.endpointUrl} 'customers { * } LIMIT 5' --key "$REPLIX_API_KEY"`,
    });
    // `replix db show` is the same command: db is databases' short name.
    expect(await json(['db', 'show', databaseId])).toEqual(
      await json(['databases', 'show', databaseId]),
    );
    // By name, for people.
    const plain = await replix(['databases', 'show', 'shop-db']);
    expect(plain).toMatchObject({ code: 0, stderr: '' });
    expect(plain.stdout).toMatch(/^status: +running$/m);
    expect(plain.stdout).toMatch(/^health: +(ok|-)$/m);
    expect(plain.stdout).toContain(`endpoint:`);
    expect(plain.stdout).toMatch(/^latest build: +succeeded, finished \S+Z \(/m);
    expect(plain.stdout).toContain(`  ${shown.query}\n`);
    expect(plain.stdout).not.toMatch(/rxk_[0-9a-f]{16}\./);
    const unknown = await replix(['databases', 'show', 'no-such-db']);
    expect(unknown).toMatchObject({
      code: 1,
      stderr: 'replix databases show: no database is named no-such-db.\n',
    });

    // The printed line runs as printed, with the key in REPLIX_API_KEY.
    const key = /^(rxk_\S+)$/m.exec(
      (await replix(['keys', 'create', databaseId, '--name', 'show'])).stdout,
    )?.[1] as string;
    // Pasted into a shell in a project where the CLI is installed (here, the repository).
    const pasted = async (): Promise<Result> => {
      try {
        const { stdout, stderr } = await run('sh', ['-c', shown.query as string], {
          cwd: REPOSITORY_ROOT,
          env: { PATH: process.env.PATH, HOME: process.env.HOME, REPLIX_API_KEY: key },
        });
        return { code: 0, stdout, stderr };
      } catch (error) {
        const failed = error as { code: number; stdout: string; stderr: string };
        return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
      }
    };
    // A new key reaches the instance within a second or two (docs/walkthrough.md).
    const sent = Date.now();
    let answer = await pasted();
    while (answer.stderr.includes('unauthorized') && Date.now() - sent < 5000) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      answer = await pasted();
    }
    expect(answer).toMatchObject({ code: 0, stderr: '' });
    expect(answer.stdout).toContain('Grace');

    // The control plane's address instead of the endpoint's: the error says which URL to use.
    const wrongUrl = await replix([
      'query',
      new URL(cp.url).origin,
      'customers { id }',
      '--key',
      key,
    ]);
    expect(wrongUrl.code).toBe(1);
    expect(wrongUrl.stderr).toContain("answered HTTP 404 without an instance's error envelope");
    expect(wrongUrl.stderr).toContain(
      "Use the database's endpoint URL (`npx replix databases show <database>` prints it)",
    );
  });
});
