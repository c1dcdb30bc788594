import {
  type PostV1Auth2FaEnrollResponse,
  postV1Auth2FaConfirm,
  postV1Auth2FaEnroll,
} from '@replix/client';
import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, unwrap } from '../api.ts';
import { signIn } from '../session.ts';
import { CopyButton } from './bits.tsx';
import { TextField } from './fields.tsx';
import { ErrorNotice } from './page.tsx';
import { keepRecoveryCodes } from './two-factor-recovery.tsx';

/**
 * Turning two-factor authentication on: a new secret (QR code and text), then a code from the
 * app to confirm it. `pending` says an earlier setup was started and not confirmed.
 */
export function TwoFactorEnrol(props: { pending: boolean }) {
  const enrol = useMutation({
    mutationFn: () => unwrap(postV1Auth2FaEnroll({ client: api })),
  });
  if (enrol.data) return <ConfirmEnrolment enrolment={enrol.data} onCancel={enrol.reset} />;
  return (
    <div className="stack">
      <p>
        Protect your sign-in with a code from an authenticator app (any TOTP app: 1Password, Google
        Authenticator, Authy…) on top of your login link.
      </p>
      {props.pending && (
        <p className="muted">
          A setup was started and not finished; starting again replaces its secret.
        </p>
      )}
      {enrol.error && <ErrorNotice error={enrol.error} />}
      <div className="row">
        <button
          type="button"
          className="button button-primary"
          disabled={enrol.isPending}
          onClick={() => enrol.mutate()}
        >
          Set up two-factor authentication
        </button>
      </div>
    </div>
  );
}

/** Base32 in groups of four, easier to type; the app ignores the spaces. */
function grouped(secret: string): string {
  return secret.replace(/(.{4})(?=.)/g, '$1 ');
}

function ConfirmEnrolment(props: { enrolment: PostV1Auth2FaEnrollResponse; onCancel: () => void }) {
  const [code, setCode] = useState('');
  const confirm = useMutation({
    mutationFn: () => unwrap(postV1Auth2FaConfirm({ client: api, body: { code: code.trim() } })),
    onSuccess: (result) => {
      // Keep the codes first: the new session remounts this page.
      keepRecoveryCodes(result.recoveryCodes, result.token);
      signIn(result.token, result.expiresAt);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    confirm.mutate();
  };
  // An <img> never runs what an SVG might contain, unlike markup put into the page.
  const qrSource = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(props.enrolment.qrCodeSvg)}`;
  return (
    <form
      className="stack two-factor-confirm"
      onSubmit={submit}
      aria-label="Confirm two-factor authentication"
    >
      <div className="two-factor-enrol">
        <img
          className="two-factor-qr"
          src={qrSource}
          alt="QR code to scan with your authenticator app"
        />
        <div className="stack">
          <p>1. Scan the QR code with your authenticator app, or enter this secret by hand:</p>
          <div className="secret-row">
            <code className="secret">{grouped(props.enrolment.secret)}</code>
            <CopyButton text={props.enrolment.secret} label="Copy secret" />
          </div>
          <p className="muted">Time-based (TOTP), SHA-1, 6 digits, every 30 seconds.</p>
        </div>
      </div>
      <p>2. Enter the code your app shows now: two-factor authentication is on once it matches.</p>
      <TextField
        label="Code from your app"
        value={code}
        onChange={(event) => setCode(event.target.value)}
        inputMode="numeric"
        autoComplete="one-time-code"
        pattern="\d{6}"
        maxLength={6}
        required
        autoFocus
      />
      {confirm.error && <ErrorNotice error={confirm.error} />}
      <div className="row">
        <button
          type="submit"
          className="button button-primary"
          disabled={confirm.isPending || code.trim().length !== 6}
        >
          Turn on two-factor authentication
        </button>
        <button type="button" className="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
