import { describe, expect, it } from 'vitest';
import { MissingBinaryError } from '../src/binaries.ts';

describe('MissingBinaryError', () => {
  it('names the Debian packages to install', () => {
    const error = new MissingBinaryError('mariadbd', 'mariadb-server');
    expect(error.message).toBe(
      'mariadbd was not found. Install it with: apt-get update && apt-get install -y mariadb-server',
    );
  });
});
