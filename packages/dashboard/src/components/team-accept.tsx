import { postV1TeamInvitationsAccept } from '@replix/client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, unwrap } from '../api.ts';
import { TextField } from './fields.tsx';
import { ErrorNotice, Panel } from './page.tsx';
import { ROLE_LABELS } from './team-rules.ts';

/** The signed-in user joins another account with an invitation token (`rti_…`). */
export function TeamAcceptPanel(props: { email: string; accountEmail: string }) {
  const queryClient = useQueryClient();
  const [token, setToken] = useState('');
  const accept = useMutation({
    mutationFn: () =>
      unwrap(postV1TeamInvitationsAccept({ client: api, body: { token: token.trim() } })),
    onSuccess: async () => {
      setToken('');
      // The caller now belongs to another account: every cached answer is the old account's.
      // (Invalidated, not reset: a reset would unmount the page while the account reloads.)
      await queryClient.invalidateQueries();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    accept.mutate();
  };
  return (
    <Panel title="Accept an invitation">
      <form className="stack" onSubmit={submit} aria-label="Accept an invitation">
        <p>
          Someone invited <strong>{props.email}</strong> to their account and sent you a token (
          <code>rti_…</code>)? Paste it here.
        </p>
        <div className="notice notice-warn">
          <p>
            <strong>Accepting moves you</strong> out of this account ({props.accountEmail}) into the
            inviting one, with the invitation's role. You can belong to one account at a time.
          </p>
          <p>
            Your management keys of this account are revoked. If you are this account's only user,
            it must have no databases or connections left; if you are its last owner while others
            remain, make someone else an owner first.
          </p>
        </div>
        <TextField
          label="Invitation token"
          value={token}
          onChange={(event) => setToken(event.target.value)}
          placeholder="rti_…"
          autoComplete="off"
          spellCheck={false}
          required
        />
        <div className="row">
          <button
            type="submit"
            className="button button-primary"
            disabled={accept.isPending || !token.trim()}
          >
            Accept invitation
          </button>
        </div>
        {accept.error && <ErrorNotice error={accept.error} />}
        {accept.data && (
          <div className="notice notice-info" role="status">
            You joined the account as {ROLE_LABELS[accept.data.role].toLowerCase()}.
          </div>
        )}
      </form>
    </Panel>
  );
}
