import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { claimAddress, LoopbackAddresses } from '../src/kubernetes/loopback-addresses.ts';

describe('LoopbackAddresses', () => {
  it('hands out distinct addresses of its /16 until they are released', () => {
    const addresses = new LoopbackAddresses('127.77');
    const taken = Array.from({ length: 200 }, () => addresses.take());
    expect(new Set(taken).size).toBe(200);
    for (const address of taken) expect(address).toMatch(/^127\.77\.\d{1,3}\.\d{1,3}$/);
  });

  it('skips an address whose port another program holds', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const draws = ['127.0.0.1', '127.0.0.2'];
      const address = await claimAddress({ take: () => draws.shift() as string }, [port]);
      expect(address).toBe('127.0.0.2');
    } finally {
      busy.close();
    }
  });
});
