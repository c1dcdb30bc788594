import { getV1Account } from '@replix/client';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from './api.ts';

/** The signed-in user's account: plan, role, admin flag, terms. Loaded once by the shell. */
export function useAccount() {
  return useQuery({
    queryKey: ['account'],
    queryFn: () => unwrap(getV1Account({ client: api })),
    staleTime: 30_000,
  });
}

export type Account = NonNullable<ReturnType<typeof useAccount>['data']>;

const ROLE_RANK = { member: 0, admin: 1, owner: 2 } as const;

/** The caller's team role is at least `role` (buttons the API would refuse are disabled). */
export function hasRole(account: Account | undefined, role: keyof typeof ROLE_RANK): boolean {
  const rank = ROLE_RANK[account?.user.role as keyof typeof ROLE_RANK] ?? -1;
  return rank >= ROLE_RANK[role];
}
