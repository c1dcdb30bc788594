import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@replix/testkit';

const SSHD = '/usr/sbin/sshd';

/** A real OpenSSH server on a free loopback port that accepts one generated client key. */
export interface ThrowawaySshd {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  /** The OpenSSH private key the server accepts. */
  readonly privateKey: string;
  /** A key the server does not accept. */
  readonly strangerKey: string;
  stop(): Promise<void>;
}

function keyPair(dir: string, name: string): string {
  const file = join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', file]);
  return file;
}

function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Starts `sshd -D -e -f <config>` in a temporary folder with a fresh host key, key-only login
 * for the current user and TCP forwarding on. Needs /run/sshd (its privilege-separation folder)
 * when run as root; it is made if missing.
 */
export async function startThrowawaySshd(): Promise<ThrowawaySshd> {
  if (!existsSync(SSHD)) {
    throw new Error(`${SSHD} is missing: install the Debian package openssh-server.`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'replix-sshd-'));
  const hostKey = keyPair(dir, 'host_key');
  const clientKey = keyPair(dir, 'client_key');
  const strangerKey = keyPair(dir, 'stranger_key');
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(`${clientKey}.pub`));
  const port = await freePort();
  const user = userInfo().username;
  writeFileSync(
    join(dir, 'sshd_config'),
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      'StrictModes no',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PermitRootLogin prohibit-password',
      'AllowTcpForwarding yes',
      'UsePAM no',
      'LogLevel ERROR',
      '',
    ].join('\n'),
  );
  if (process.getuid?.() === 0) mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const child: ChildProcess = spawn(SSHD, ['-D', '-e', '-f', join(dir, 'sshd_config')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += String(chunk);
  });
  const deadline = Date.now() + 10_000;
  while (!(await accepting(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill();
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`sshd did not start: ${stderr.trim()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    host: '127.0.0.1',
    port,
    user,
    privateKey: readFileSync(clientKey, 'utf8'),
    strangerKey: readFileSync(strangerKey, 'utf8'),
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
