import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EMBEDDED_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';

const run = promisify(execFile);
const cli = fileURLToPath(new URL('../../cli/bin/replix.js', import.meta.url));

/** RFC 4648 base32, decoded here rather than by the library under test. */
function base32Decode(text: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const char of text.replace(/=+$/, '').toUpperCase()) {
    bits += alphabet.indexOf(char).toString(2).padStart(5, '0');
  }
  const bytes: number[] = [];
  for (let i = 0; i + 8 <= bits.length; i += 8)
    bytes.push(Number.parseInt(bits.slice(i, i + 8), 2));
  return Buffer.from(bytes);
}

/** An independent RFC 6238 TOTP (SHA-1, 6 digits, 30 s) for the step `offset` steps from now. */
function totp(secret: string, offset = 0): string {
  const counter = Math.floor(Date.now() / 30_000) + offset;
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const hmac = createHmac('sha1', base32Decode(secret)).update(message).digest();
  const at = (hmac[hmac.length - 1] as number) & 0xf;
  const value = hmac.readUInt32BE(at) & 0x7fffffff;
  return String(value % 1_000_000).padStart(6, '0');
}

/** Waits until at least 8 s remain in the current 30-s step, so codes of steps −1, 0, +1 hold. */
async function freshStep(): Promise<void> {
  const left = 30_000 - (Date.now() % 30_000);
  if (left < 8_000) await new Promise((resolve) => setTimeout(resolve, left + 100));
}

describe.each(EMBEDDED_STORE)('two-factor authentication on the %s store', (kind) => {
  let cp: TestControlPlane;
  beforeAll(async () => {
    cp = await startTestControlPlane(kind);
  });
  afterAll(() => cp?.close());

  /** Enrols and confirms 2FA for `email`; returns the secret, recovery codes and a 2FA token. */
  async function enable(email: string) {
    const token = await cp.token(email);
    const enrolled = await cp.request('POST', '/v1/auth/2fa/enroll', { token });
    expect(enrolled.status).toBe(200);
    const secret: string = enrolled.body.secret;
    await freshStep();
    // Confirm with the previous step's code, so the current and next ones stay usable.
    const confirmed = await cp.request('POST', '/v1/auth/2fa/confirm', {
      token,
      body: { code: totp(secret, -1) },
    });
    expect(confirmed.status).toBe(200);
    return {
      token,
      secret,
      recoveryCodes: confirmed.body.recoveryCodes as string[],
      secondFactorToken: confirmed.body.token as string,
    };
  }

  it('enrols with a QR code, confirms, then refuses first-factor tokens until the exchange', async () => {
    const token = await cp.token('totp@example.com');
    const before = await cp.request('GET', '/v1/auth/2fa', { token });
    expect(before.body).toEqual({
      available: true,
      enabled: false,
      enabledAt: null,
      pending: false,
      recoveryCodesLeft: 0,
    });
    const enrolled = await cp.request('POST', '/v1/auth/2fa/enroll', { token });
    expect(enrolled.status).toBe(200);
    expect(enrolled.body.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(enrolled.body.otpauthUrl).toMatch(/^otpauth:\/\/totp\/Replix:totp%40example\.com\?/);
    expect(enrolled.body.otpauthUrl).toContain(`secret=${enrolled.body.secret}`);
    expect(enrolled.body.qrCodeSvg).toMatch(/^<svg[\s\S]*<\/svg>\s*$/);
    // Pending: nothing is enforced yet.
    expect((await cp.request('GET', '/v1/auth/2fa', { token })).body).toMatchObject({
      enabled: false,
      pending: true,
    });
    expect((await cp.request('GET', '/v1/management-keys', { token })).status).toBe(200);
    // The secret is stored sealed.
    const row = await cp.context.db
      .selectFrom('users')
      .select(['totp_pending_enc'])
      .where('email', '=', 'totp@example.com')
      .executeTakeFirstOrThrow();
    expect(row.totp_pending_enc).not.toContain(enrolled.body.secret);

    const wrong = await cp.request('POST', '/v1/auth/2fa/confirm', {
      token,
      body: { code: '000000' === totp(enrolled.body.secret) ? '111111' : '000000' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe('validation_failed');

    await freshStep();
    const confirmed = await cp.request('POST', '/v1/auth/2fa/confirm', {
      token,
      body: { code: totp(enrolled.body.secret, -1) },
    });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.recoveryCodes).toHaveLength(10);
    expect(new Set(confirmed.body.recoveryCodes).size).toBe(10);
    expect(typeof confirmed.body.token).toBe('string');

    // The first-factor token is now refused everywhere but the exchange.
    for (const [method, path] of [
      ['GET', '/v1/management-keys'],
      ['GET', '/v1/databases'],
      ['GET', '/v1/auth/2fa'],
      ['POST', '/v1/auth/2fa/enroll'],
    ] as const) {
      const refused = await cp.request(method, path, { token });
      expect(refused.status, path).toBe(401);
      expect(refused.body).toEqual({
        error: 'second_factor_required',
        message: expect.stringContaining('/v1/auth/2fa/verify'),
      });
    }
    // The token handed out by confirm carries the second factor.
    expect((await cp.request('GET', '/v1/databases', { token: confirmed.body.token })).status).toBe(
      200,
    );

    const exchanged = await cp.request('POST', '/v1/auth/2fa/verify', {
      token,
      body: { code: totp(enrolled.body.secret) },
    });
    expect(exchanged.status).toBe(200);
    expect(exchanged.body).toEqual({ token: expect.any(String), expiresAt: expect.any(String) });
    const payload = JSON.parse(
      Buffer.from(exchanged.body.token.split('.')[1], 'base64url').toString(),
    );
    expect(payload.amr).toEqual(['pwd', 'otp']);
    expect(Date.parse(exchanged.body.expiresAt)).toBeLessThanOrEqual(Date.now() + 12 * 3600_000);
    const status = await cp.request('GET', '/v1/auth/2fa', { token: exchanged.body.token });
    expect(status.body).toMatchObject({ enabled: true, pending: false, recoveryCodesLeft: 10 });

    // The same code does not work twice.
    const replay = await cp.request('POST', '/v1/auth/2fa/verify', {
      token,
      body: { code: totp(enrolled.body.secret) },
    });
    expect(replay.status).toBe(400);

    const audit = await cp.request('GET', '/v1/account/audit-log?limit=100', {
      token: exchanged.body.token,
    });
    const types = audit.body.events.map((e: { eventType: string }) => e.eventType);
    for (const type of [
      'two_factor.enrollment_started',
      'two_factor.enabled',
      'two_factor.verified',
    ])
      expect(types).toContain(type);
    expect(JSON.stringify(audit.body)).not.toContain(enrolled.body.secret);
  });

  it('accepts each recovery code once, and turns 2FA off with a code', async () => {
    const { token, secret, recoveryCodes, secondFactorToken } = await enable('recover@example.com');
    const [first, second] = recoveryCodes as [string, string];
    const used = await cp.request('POST', '/v1/auth/2fa/verify', {
      token,
      body: { recoveryCode: first.toUpperCase() },
    });
    expect(used.status).toBe(200);
    const again = await cp.request('POST', '/v1/auth/2fa/verify', {
      token,
      body: { recoveryCode: first },
    });
    expect(again.status).toBe(400);
    expect(
      (await cp.request('GET', '/v1/auth/2fa', { token: used.body.token })).body.recoveryCodesLeft,
    ).toBe(9);
    const both = await cp.request('POST', '/v1/auth/2fa/verify', {
      token,
      body: { code: totp(secret), recoveryCode: second },
    });
    expect(both.status).toBe(400);

    // Disabling needs a second-factor token and a code.
    expect(
      (await cp.request('DELETE', '/v1/auth/2fa', { token, body: { code: totp(secret) } })).status,
    ).toBe(401);
    const off = await cp.request('DELETE', '/v1/auth/2fa', {
      token: secondFactorToken,
      body: { code: totp(secret) },
    });
    expect(off.status).toBe(204);
    expect((await cp.request('GET', '/v1/databases', { token })).status).toBe(200);
    expect((await cp.request('GET', '/v1/auth/2fa', { token })).body).toMatchObject({
      enabled: false,
      recoveryCodesLeft: 0,
    });
    expect(
      (await cp.request('POST', '/v1/auth/2fa/verify', { token, body: { recoveryCode: second } }))
        .status,
    ).toBe(409);
  });

  it('limits wrong codes to 5 per 15 minutes, after which even a right one is refused', async () => {
    const { token, secret } = await enable('brute@example.com');
    const right = totp(secret);
    const wrongCode = right === '123456' ? '654321' : '123456';
    for (let attempt = 1; attempt <= 5; attempt++) {
      const wrong = await cp.request('POST', '/v1/auth/2fa/verify', {
        token,
        body: { code: wrongCode },
      });
      expect(wrong.status, `attempt ${attempt}`).toBe(400);
    }
    const limited = await cp.request('POST', '/v1/auth/2fa/verify', {
      token,
      body: { code: right },
    });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: 'too_many_attempts', message: expect.any(String) });
    // Another user is not affected.
    const other = await enable('calm@example.com');
    expect(
      (
        await cp.request('POST', '/v1/auth/2fa/verify', {
          token: other.token,
          body: { code: totp(other.secret) },
        })
      ).status,
    ).toBe(200);
  });

  it('answers 409 to the exchange without 2FA on, and refuses management keys', async () => {
    const token = await cp.token('plain@example.com');
    const exchange = await cp.request('POST', '/v1/auth/2fa/verify', {
      token,
      body: { code: '123456' },
    });
    expect(exchange.status).toBe(409);
    const key = await cp.request('POST', '/v1/management-keys', { token, body: { name: 'k' } });
    const byKey = await cp.request('POST', '/v1/auth/2fa/enroll', { token: key.body.key });
    expect(byKey.status).toBe(403);
  });

  it('replix token --otp exchanges the code at the running control plane', async () => {
    const { secret } = await enable('cli@example.com');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      REPLIX_DATA_DIR: cp.dataDir,
      REPLIX_API_URL: cp.url,
    };
    delete env.DATABASE_URL;
    const plain = await run(process.execPath, [cli, 'token', '--email', 'cli@example.com'], {
      env,
    });
    const firstFactor = plain.stdout.trim();
    expect((await cp.request('GET', '/v1/databases', { token: firstFactor })).status).toBe(401);

    const withOtp = await run(
      process.execPath,
      [cli, 'token', '--email', 'cli@example.com', '--otp', totp(secret)],
      { env },
    );
    const secondFactor = withOtp.stdout.trim();
    expect((await cp.request('GET', '/v1/databases', { token: secondFactor })).status).toBe(200);

    const failed = await run(
      process.execPath,
      [cli, 'token', '--email', 'cli@example.com', '--otp', '12345x'],
      { env },
    ).catch((error: { code: number; stderr: string; stdout: string }) => error);
    expect(failed).toMatchObject({ code: 1, stdout: '' });
    expect((failed as { stderr: string }).stderr).toContain('validation_failed');
  });
});
