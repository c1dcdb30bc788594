import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EMBEDDED_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import { caller, insertConnection, insertDatabase } from './lifecycle-fixtures.ts';

describe.each(EMBEDDED_STORE)('teams on the %s store', (kind) => {
  let cp: TestControlPlane;
  beforeAll(async () => {
    cp = await startTestControlPlane(kind);
  });
  afterAll(() => cp?.close());

  /** Invites `email` into the account of `inviter` with `role` and accepts as them. */
  async function join(inviter: string, email: string, role: string): Promise<string> {
    const invited = await cp.request('POST', '/v1/team/invitations', {
      token: inviter,
      body: { email, role },
    });
    expect(invited.status).toBe(201);
    const token = await cp.token(email);
    const accepted = await cp.request('POST', '/v1/team/invitations/accept', {
      token,
      body: { token: invited.body.token },
    });
    expect(accepted.status).toBe(200);
    return token;
  }

  const members = async (token: string) =>
    (await cp.request('GET', '/v1/team/members', { token })).body as Array<{
      userId: string;
      email: string;
      role: string;
    }>;

  it('makes the first user of an account its owner', async () => {
    const { token } = await caller(cp, 'solo@example.com');
    expect(await members(token)).toEqual([
      expect.objectContaining({
        email: 'solo@example.com',
        role: 'owner',
        twoFactorEnabled: false,
      }),
    ]);
  });

  it('invites, accepts, and the member sees the account’s databases but cannot change them', async () => {
    const owner = await caller(cp, 'owner-a@example.com');
    const database = await insertDatabase(cp, owner, { name: 'shared' });
    const invited = await cp.request('POST', '/v1/team/invitations', {
      token: owner.token,
      body: { email: 'Member-A@Example.com', role: 'member' },
    });
    expect(invited.status).toBe(201);
    expect(invited.body).toEqual({
      id: expect.any(String),
      email: 'member-a@example.com',
      role: 'member',
      createdAt: expect.any(String),
      expiresAt: expect.any(String),
      token: expect.stringMatching(/^rti_[\w-]{43}$/),
    });
    const lifetime = Date.parse(invited.body.expiresAt) - Date.parse(invited.body.createdAt);
    expect(lifetime).toBe(7 * 24 * 3600 * 1000);

    const listed = await cp.request('GET', '/v1/team/invitations', { token: owner.token });
    expect(listed.body).toEqual([
      expect.objectContaining({
        id: invited.body.id,
        email: 'member-a@example.com',
        role: 'member',
        status: 'pending',
        invitedBy: 'owner-a@example.com',
      }),
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(invited.body.token);

    // Someone else cannot use the token.
    const stranger = await cp.token('stranger@example.com');
    const stolen = await cp.request('POST', '/v1/team/invitations/accept', {
      token: stranger,
      body: { token: invited.body.token },
    });
    expect(stolen.status).toBe(403);
    expect(stolen.body.error).toBe('forbidden');

    const member = await cp.token('member-a@example.com');
    const accepted = await cp.request('POST', '/v1/team/invitations/accept', {
      token: member,
      body: { token: invited.body.token },
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({ accountId: owner.accountId, role: 'member' });
    // Used once.
    const again = await cp.request('POST', '/v1/team/invitations/accept', {
      token: member,
      body: { token: invited.body.token },
    });
    expect(again.status).toBe(404);
    expect((await cp.request('GET', '/v1/team/invitations', { token: owner.token })).body).toEqual(
      [],
    );

    const seen = await cp.request('GET', `/v1/databases/${database.id}`, { token: member });
    expect(seen.status).toBe(200);
    expect(seen.body.name).toBe('shared');
    expect((await members(owner.token)).map((m) => [m.email, m.role])).toEqual([
      ['owner-a@example.com', 'owner'],
      ['member-a@example.com', 'member'],
    ]);

    // A member may not change state …
    for (const [method, path, body] of [
      ['POST', `/v1/databases/${database.id}/provision`, undefined],
      ['PATCH', `/v1/databases/${database.id}`, { name: 'renamed' }],
      ['POST', '/v1/team/invitations', { email: 'x@example.com', role: 'member' }],
      ['POST', '/v1/connections', { name: 'c', host: 'h', user: 'u', password: 'p' }],
    ] as const) {
      const refused = await cp.request(method, path, { token: member, body });
      expect(refused.status, `${method} ${path}`).toBe(403);
      expect(refused.body).toEqual({
        error: 'forbidden',
        message: expect.stringContaining('admin'),
      });
    }
    // … except their own management keys, which act with their role.
    const key = await cp.request('POST', '/v1/management-keys', {
      token: member,
      body: { name: 'mine' },
    });
    expect(key.status).toBe(201);
    expect(
      (await cp.request('GET', `/v1/databases/${database.id}`, { token: key.body.key })).status,
    ).toBe(200);
    expect(
      (await cp.request('POST', `/v1/databases/${database.id}/provision`, { token: key.body.key }))
        .status,
    ).toBe(403);
    // The owner's key is not the member's to revoke.
    const ownerKey = await cp.request('POST', '/v1/management-keys', {
      token: owner.token,
      body: { name: 'owner' },
    });
    expect(
      (await cp.request('DELETE', `/v1/management-keys/${ownerKey.body.id}`, { token: member }))
        .status,
    ).toBe(404);
    expect(
      (await cp.request('DELETE', `/v1/management-keys/${key.body.id}`, { token: member })).status,
    ).toBe(204);

    const audit = await cp.request('GET', '/v1/account/audit-log?limit=100', {
      token: owner.token,
    });
    const types = audit.body.events.map((e: { eventType: string }) => e.eventType);
    expect(types).toContain('team_invitation.created');
    expect(types).toContain('team_invitation.accepted');
  });

  it('changes roles: admins manage members, only owners touch owners, one owner always stays', async () => {
    const owner = await caller(cp, 'owner-b@example.com');
    const admin = await join(owner.token, 'admin-b@example.com', 'admin');
    const member = await join(owner.token, 'member-b@example.com', 'member');
    const byEmail = async (email: string) =>
      (await members(owner.token)).find((m) => m.email === email)?.userId as string;
    const ownerId = await byEmail('owner-b@example.com');
    const adminId = await byEmail('admin-b@example.com');
    const memberId = await byEmail('member-b@example.com');

    // Admins may invite members and admins, not owners.
    const ownerInvite = await cp.request('POST', '/v1/team/invitations', {
      token: admin,
      body: { email: 'future-owner@example.com', role: 'owner' },
    });
    expect(ownerInvite.status).toBe(403);
    const adminInvite = await cp.request('POST', '/v1/team/invitations', {
      token: admin,
      body: { email: 'later@example.com', role: 'member' },
    });
    expect(adminInvite.status).toBe(201);
    const duplicate = await cp.request('POST', '/v1/team/invitations', {
      token: admin,
      body: { email: 'later@example.com', role: 'admin' },
    });
    expect(duplicate.status).toBe(409);
    expect(
      (await cp.request('DELETE', `/v1/team/invitations/${adminInvite.body.id}`, { token: admin }))
        .status,
    ).toBe(204);
    const already = await cp.request('POST', '/v1/team/invitations', {
      token: owner.token,
      body: { email: 'member-b@example.com', role: 'member' },
    });
    expect(already.status).toBe(409);

    // An admin promotes a member to admin, but cannot make owners or demote the owner.
    const promoted = await cp.request('PATCH', `/v1/team/members/${memberId}`, {
      token: admin,
      body: { role: 'admin' },
    });
    expect(promoted.status).toBe(200);
    expect(promoted.body).toMatchObject({ userId: memberId, role: 'admin' });
    for (const [target, role] of [
      [memberId, 'owner'],
      [ownerId, 'member'],
    ] as const) {
      const refused = await cp.request('PATCH', `/v1/team/members/${target}`, {
        token: admin,
        body: { role },
      });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toBe('forbidden');
    }
    expect(
      (await cp.request('DELETE', `/v1/team/members/${ownerId}`, { token: admin })).status,
    ).toBe(403);

    // The only owner cannot step down or leave.
    const stepDown = await cp.request('PATCH', `/v1/team/members/${ownerId}`, {
      token: owner.token,
      body: { role: 'admin' },
    });
    expect(stepDown.status).toBe(409);
    expect(stepDown.body.error).toBe('conflict');
    expect(
      (await cp.request('DELETE', `/v1/team/members/${ownerId}`, { token: owner.token })).status,
    ).toBe(409);

    // With a second owner, the first may step down.
    const second = await cp.request('PATCH', `/v1/team/members/${adminId}`, {
      token: owner.token,
      body: { role: 'owner' },
    });
    expect(second.body.role).toBe('owner');
    const down = await cp.request('PATCH', `/v1/team/members/${ownerId}`, {
      token: owner.token,
      body: { role: 'member' },
    });
    expect(down.status).toBe(200);
    // Now a member: the same token no longer changes roles.
    expect(
      (
        await cp.request('PATCH', `/v1/team/members/${memberId}`, {
          token: owner.token,
          body: { role: 'member' },
        })
      ).status,
    ).toBe(403);

    // Removing a member: they keep signing in, into a new empty account of their own.
    const removed = await cp.request('DELETE', `/v1/team/members/${memberId}`, { token: admin });
    expect(removed.status).toBe(204);
    expect((await members(admin)).map((m) => m.email).sort()).toEqual([
      'admin-b@example.com',
      'owner-b@example.com',
    ]);
    expect(await members(member)).toEqual([
      expect.objectContaining({ email: 'member-b@example.com', role: 'owner' }),
    ]);
    expect((await cp.request('GET', '/v1/databases', { token: member })).body).toEqual([]);

    const audit = await cp.request('GET', '/v1/account/audit-log?limit=100', { token: admin });
    const types = audit.body.events.map((e: { eventType: string }) => e.eventType);
    for (const type of [
      'team_member.updated',
      'team_member.removed',
      'team_invitation.deleted',
      'team_invitation.created',
    ]) {
      expect(types).toContain(type);
    }
  });

  it('refuses to join while the personal account still holds resources', async () => {
    const owner = await caller(cp, 'owner-c@example.com');
    const busy = await caller(cp, 'busy-c@example.com');
    await insertConnection(cp, busy);
    const invited = await cp.request('POST', '/v1/team/invitations', {
      token: owner.token,
      body: { email: 'busy-c@example.com', role: 'admin' },
    });
    const refused = await cp.request('POST', '/v1/team/invitations/accept', {
      token: busy.token,
      body: { token: invited.body.token },
    });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe('conflict');
    expect(refused.body.message).toContain('databases or connections');
    expect(await members(busy.token)).toHaveLength(1);
  });

  it('keeps accounts apart: ids of another account are 404, invitations of another unknown', async () => {
    const a = await caller(cp, 'owner-d@example.com');
    const b = await caller(cp, 'owner-e@example.com');
    const bMembers = await members(b.token);
    const bId = bMembers[0]?.userId as string;
    expect(
      (
        await cp.request('PATCH', `/v1/team/members/${bId}`, {
          token: a.token,
          body: { role: 'member' },
        })
      ).status,
    ).toBe(404);
    expect((await cp.request('DELETE', `/v1/team/members/${bId}`, { token: a.token })).status).toBe(
      404,
    );
    const invited = await cp.request('POST', '/v1/team/invitations', {
      token: b.token,
      body: { email: 'x-e@example.com', role: 'member' },
    });
    expect(
      (await cp.request('DELETE', `/v1/team/invitations/${invited.body.id}`, { token: a.token }))
        .status,
    ).toBe(404);
    expect((await cp.request('GET', '/v1/team/invitations', { token: a.token })).body).toEqual([]);
    expect(
      (
        await cp.request('POST', '/v1/team/invitations/accept', {
          token: a.token,
          body: { token: 'rti_nonsense' },
        })
      ).status,
    ).toBe(404);
  });

  it('validates bodies and needs a token', async () => {
    const { token } = await caller(cp, 'owner-f@example.com');
    const badRole = await cp.request('POST', '/v1/team/invitations', {
      token,
      body: { email: 'y@example.com', role: 'boss' },
    });
    expect(badRole.status).toBe(400);
    expect(badRole.body.error).toBe('validation_failed');
    const badEmail = await cp.request('POST', '/v1/team/invitations', {
      token,
      body: { email: 'nope', role: 'member' },
    });
    expect(badEmail.status).toBe(400);
    expect((await cp.request('GET', '/v1/team/members')).status).toBe(401);
  });
});
