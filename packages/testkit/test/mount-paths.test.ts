import { describe, expect, it } from 'vitest';
import { MountPaths } from '../src/kubernetes/mount-paths.ts';

describe('MountPaths', () => {
  const mounts = new MountPaths(
    new Map([
      ['/etc/keys', '/tmp/pod/keys'],
      ['/etc/keys/extra/', '/tmp/pod/extra'],
      ['/tmp', '/tmp/pod/tmp'],
    ]),
    // Nothing counts as a file of this machine: a stray /tmp/x there must not change the answer.
    () => false,
  );

  it('rewrites a mount path standing alone or starting a path', () => {
    expect(mounts.rewrite('/etc/keys')).toBe('/tmp/pod/keys');
    expect(mounts.rewrite('/etc/keys/keys.json')).toBe('/tmp/pod/keys/keys.json');
    expect(mounts.rewrite('--dir=/tmp')).toBe('--dir=/tmp/pod/tmp');
    expect(mounts.rewrite('read(\'/etc/keys/a\') + read("/tmp/b")')).toBe(
      'read(\'/tmp/pod/keys/a\') + read("/tmp/pod/tmp/b")',
    );
  });

  it('prefers the longest mount path', () => {
    expect(mounts.rewrite('/etc/keys/extra/x')).toBe('/tmp/pod/extra/x');
  });

  it('leaves longer names and paths that only contain a mount path alone', () => {
    expect(mounts.rewrite('/etc/keys2/x')).toBe('/etc/keys2/x');
    expect(mounts.rewrite('/var/tmp/x')).toBe('/var/tmp/x');
    expect(mounts.rewrite('/tmp.d')).toBe('/tmp.d');
    expect(mounts.rewrite('plain text')).toBe('plain text');
  });

  it('leaves a path under a mount path alone when it names a file this machine has (a checkout in /tmp)', () => {
    const hostFiles = new Set(['/tmp/checkout/packages/cli/bin/replix.js']);
    const paths = new MountPaths(new Map([['/tmp', '/tmp/pod/tmp']]), (path) =>
      hostFiles.has(path),
    );
    expect(paths.rewrite('/tmp/checkout/packages/cli/bin/replix.js')).toBe(
      '/tmp/checkout/packages/cli/bin/replix.js',
    );
    // The mount itself, and what is not on this machine, are the pod's.
    expect(paths.rewrite('/tmp')).toBe('/tmp/pod/tmp');
    expect(paths.rewrite('HOME=/tmp /tmp/cache/x')).toBe('HOME=/tmp/pod/tmp /tmp/pod/tmp/cache/x');
  });

  it('rewrites nothing twice: a target inside another mount path stays', () => {
    expect(mounts.rewrite('/tmp/x /etc/keys')).toBe('/tmp/pod/tmp/x /tmp/pod/keys');
  });
});
