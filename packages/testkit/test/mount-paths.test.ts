import { describe, expect, it } from 'vitest';
import { MountPaths } from '../src/kubernetes/mount-paths.ts';

describe('MountPaths', () => {
  const mounts = new MountPaths(
    new Map([
      ['/etc/keys', '/tmp/pod/keys'],
      ['/etc/keys/extra/', '/tmp/pod/extra'],
      ['/tmp', '/tmp/pod/tmp'],
    ]),
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

  it('rewrites nothing twice: a target inside another mount path stays', () => {
    expect(mounts.rewrite('/tmp/x /etc/keys')).toBe('/tmp/pod/tmp/x /tmp/pod/keys');
  });
});
