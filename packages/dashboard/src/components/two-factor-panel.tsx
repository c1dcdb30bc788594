import { deleteV1Auth2Fa, type GetV1Auth2FaResponse, getV1Auth2Fa } from '@replix/client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, unwrap } from '../api.ts';
import { Time } from './bits.tsx';
import { TextField } from './fields.tsx';
import { ErrorNotice, Panel, QueryState } from './page.tsx';
import { secondFactorBody } from './second-factor-code.ts';
import { MEMBERS_KEY } from './team-members.tsx';
import { TwoFactorEnrol } from './two-factor-enrol.tsx';
import { RecoveryCodesOnce } from './two-factor-recovery.tsx';

const TWO_FACTOR_KEY = ['two-factor'] as const;

/** The signed-in user's second factor: its state, turning it on, and off. */
export function TwoFactorPanel() {
  const status = useQuery({
    queryKey: TWO_FACTOR_KEY,
    queryFn: () => unwrap(getV1Auth2Fa({ client: api })),
  });
  return (
    <Panel title="Two-factor authentication">
      <RecoveryCodesOnce />
      <QueryState query={status} what="your two-factor settings" />
      {status.data && <TwoFactorState status={status.data} />}
    </Panel>
  );
}

function TwoFactorState(props: { status: GetV1Auth2FaResponse }) {
  const { status } = props;
  if (!status.available) {
    return (
      <p>
        Replix signs you in through an external identity provider, so two-factor authentication is
        set up there, not here.
      </p>
    );
  }
  if (!status.enabled) {
    return (
      <div className="stack">
        <p role="status">
          Status: <span className="badge badge-neutral">off</span>
        </p>
        <TwoFactorEnrol pending={status.pending} />
      </div>
    );
  }
  return (
    <div className="stack">
      <p role="status">
        Status: <span className="badge badge-good">on</span> since <Time value={status.enabledAt} />
        .
      </p>
      <p className={status.recoveryCodesLeft <= 2 ? 'notice notice-warn' : 'muted'}>
        {status.recoveryCodesLeft} of 10 recovery codes left.
        {status.recoveryCodesLeft <= 2 &&
          ' To get new ones, turn two-factor authentication off and on again.'}
      </p>
      <p className="muted">
        Management keys made before you turned it on keep working: revoke them below to be strict.
      </p>
      <DisableTwoFactor />
    </div>
  );
}

function DisableTwoFactor() {
  const queryClient = useQueryClient();
  const [code, setCode] = useState('');
  const disable = useMutation({
    mutationFn: () => unwrap(deleteV1Auth2Fa({ client: api, body: secondFactorBody(code) })),
    onSuccess: async () => {
      setCode('');
      await queryClient.invalidateQueries({ queryKey: TWO_FACTOR_KEY });
      await queryClient.invalidateQueries({ queryKey: MEMBERS_KEY });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    disable.mutate();
  };
  return (
    <form className="stack" onSubmit={submit} aria-label="Turn off two-factor authentication">
      <h3>Turn it off</h3>
      <TextField
        label="Code or recovery code"
        hint="A current code from your app, or one of your recovery codes. The secret and the recovery codes are deleted."
        value={code}
        onChange={(event) => setCode(event.target.value)}
        autoComplete="one-time-code"
        spellCheck={false}
        required
      />
      {disable.error && <ErrorNotice error={disable.error} />}
      <div className="row">
        <button
          type="submit"
          className="button button-danger"
          disabled={disable.isPending || !code.trim()}
        >
          Turn off two-factor authentication
        </button>
      </div>
    </form>
  );
}
