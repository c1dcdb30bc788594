import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunAs } from './system-user.ts';

/** A throwaway CA and a server certificate it signed, as PEM files. */
export interface TestCertificates {
  /** The CA certificate: what a client that verifies the server trusts. */
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
}

/** The names the server certificate carries: servers listen on 127.0.0.1. */
const SERVER_NAMES = 'DNS:localhost,IP:127.0.0.1';

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/**
 * Makes a CA and a server certificate for `localhost` / `127.0.0.1` in `<dir>/tls` with the
 * `openssl` command, valid for two days. The key is readable by the server's user only, as
 * PostgreSQL insists.
 */
export function createTestCertificates(dir: string, runAs: RunAs | undefined): TestCertificates {
  const tlsDir = join(dir, 'tls');
  mkdirSync(tlsDir, { recursive: true });
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      '2',
      '-subj',
      '/CN=Replix throwaway test CA',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    tlsDir,
  );
  openssl(
    [
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'server.key',
      '-out',
      'server.csr',
      '-subj',
      '/CN=localhost',
    ],
    tlsDir,
  );
  writeFileSync(
    join(tlsDir, 'server.ext'),
    [
      `subjectAltName=${SERVER_NAMES}`,
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      '',
    ].join('\n'),
  );
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'server.crt',
      '-days',
      '2',
      '-extfile',
      'server.ext',
    ],
    tlsDir,
  );
  const keyFile = join(tlsDir, 'server.key');
  chmodSync(keyFile, 0o600);
  if (runAs) {
    chownSync(tlsDir, runAs.uid, runAs.gid);
    chownSync(keyFile, runAs.uid, runAs.gid);
  }
  return { caFile: join(tlsDir, 'ca.crt'), certFile: join(tlsDir, 'server.crt'), keyFile };
}
