import { useState } from 'react';
import { useAccount } from '../account.ts';
import { ConfirmDialog } from './confirm.tsx';
import { formatDateTime } from './date-time.ts';
import { SelectField } from './fields.tsx';
import type { ActionRequest } from './instance-action-calls.ts';
import {
  type Build,
  INSTANCE_SIZES,
  type InstanceSize,
  type InstanceStatus,
} from './instance-queries.ts';

/** The actions that ask first: they stop, remove or replace the running instance. */
export type ConfirmedAction = 'pause' | 'terminate' | 'delete' | 'resize' | 'redeploy';

const COMPUTE_UNITS: Record<InstanceSize, number> = { xs: 1, s: 2, m: 4, l: 8, xl: 16 };

interface DialogProps {
  open: ConfirmedAction | null;
  status: InstanceStatus;
  builds: Build[] | undefined;
  onRun: (request: ActionRequest) => void;
  onClose: () => void;
}

/** The confirmation dialogs of the overview's actions (one open at a time). */
export function ActionDialogs(props: DialogProps) {
  const name = props.status.database.name;
  const common = { onCancel: props.onClose, danger: true };
  return (
    <>
      <ConfirmDialog
        {...common}
        open={props.open === 'pause'}
        title={`Pause ${name}?`}
        confirmLabel="Yes, pause"
        onConfirm={() => props.onRun({ action: 'pause' })}
      >
        <p>
          The instance stops and stops answering queries. The build, settings and API keys are kept;
          Resume starts it again from the source.
        </p>
      </ConfirmDialog>
      <ConfirmDialog
        {...common}
        open={props.open === 'terminate'}
        title={`Terminate ${name}?`}
        confirmLabel="Yes, terminate"
        onConfirm={() => props.onRun({ action: 'terminate' })}
      >
        <p>
          The instance and its replication state on the source are removed. The database record
          stays, and Provision builds and starts it again.
        </p>
      </ConfirmDialog>
      <ConfirmDialog
        {...common}
        open={props.open === 'delete'}
        title={`Delete ${name}?`}
        confirmLabel="Yes, delete"
        onConfirm={() => props.onRun({ action: 'delete' })}
      >
        <p>
          The instance is torn down and the database, its builds, API keys and webhooks are gone
          from the dashboard. This cannot be undone; the audit log keeps its history.
        </p>
      </ConfirmDialog>
      {props.open === 'resize' && <ResizeDialog {...props} />}
      {props.open === 'redeploy' && <RedeployDialog {...props} />}
    </>
  );
}

/** Sizes up to the plan's largest (the current one too: the replicas may change alone). */
function sizeChoices(status: InstanceStatus): InstanceSize[] {
  const max = INSTANCE_SIZES.indexOf(status.maxInstanceSize as InstanceSize);
  return INSTANCE_SIZES.filter((_, index) => index <= max);
}

function ResizeDialog(props: DialogProps) {
  const { database } = props.status;
  const choices = sizeChoices(props.status);
  const current = database.instanceSize as InstanceSize;
  const firstOther = choices.find((choice) => choice !== current);
  const [size, setSize] = useState<InstanceSize | undefined>(firstOther ?? current);
  const [replicas, setReplicas] = useState(database.replicas);
  const maxReplicas = Math.max(useAccount().data?.limits.maxReplicas ?? 1, database.replicas);
  const changed = size !== current || replicas !== database.replicas;
  const units = size ? COMPUTE_UNITS[size] * replicas : 0;
  return (
    <ConfirmDialog
      open
      title={`Resize ${database.name}`}
      confirmLabel="Apply"
      onCancel={props.onClose}
      onConfirm={() =>
        changed &&
        props.onRun({
          action: 'resize',
          instanceSize: size !== current ? size : undefined,
          replicas: replicas !== database.replicas ? replicas : undefined,
        })
      }
    >
      <p>
        A new instance starts at the new size and replica count (now <strong>{current}</strong>,{' '}
        <strong>{database.replicas}</strong> replica{database.replicas === 1 ? '' : 's'}) and takes
        over once every replica has loaded its snapshot; the current one serves until then.
      </p>
      <SelectField
        label="New size"
        value={size ?? ''}
        onChange={(event) => setSize(event.target.value as InstanceSize)}
        options={choices.map((choice) => ({
          value: choice,
          label: `${choice} (${COMPUTE_UNITS[choice]} compute unit${COMPUTE_UNITS[choice] > 1 ? 's' : ''})`,
        }))}
        hint={`Your plan allows sizes up to ${props.status.maxInstanceSize}.`}
      />
      <SelectField
        label="Read replicas"
        value={String(replicas)}
        onChange={(event) => setReplicas(Number(event.target.value))}
        options={Array.from({ length: maxReplicas }, (_, index) => ({
          value: String(index + 1),
          label: String(index + 1),
        }))}
        hint={`Each replica serves the same endpoint and follows the source itself; your plan allows ${maxReplicas}. In all: ${units} compute unit${units === 1 ? '' : 's'}.`}
      />
    </ConfirmDialog>
  );
}

function RedeployDialog(props: DialogProps) {
  const current = props.status.database.currentBuildId;
  const succeeded = (props.builds ?? []).filter((build) => build.status === 'succeeded');
  // A past build is the usual reason to redeploy; start on the newest one that is not live.
  const [buildId, setBuildId] = useState(
    (succeeded.find((build) => build.id !== current) ?? succeeded[0])?.id ?? '',
  );
  return (
    <ConfirmDialog
      open
      title={`Redeploy ${props.status.database.name}`}
      confirmLabel="Deploy this build"
      onCancel={props.onClose}
      onConfirm={() => buildId && props.onRun({ action: 'redeploy', buildId })}
    >
      <p>
        The instance restarts from the chosen build, with the engine it was built with. No new build
        runs.
      </p>
      {succeeded.length === 0 ? (
        <p className="muted">No successful build to choose from yet.</p>
      ) : (
        <SelectField
          label="Build to deploy"
          value={buildId}
          onChange={(event) => setBuildId(event.target.value)}
          options={succeeded.map((build) => ({
            value: build.id,
            label: `${formatDateTime(build.finishedAt ?? build.createdAt)} · ${build.id.slice(0, 8)}${build.id === current ? ' (running now)' : ''}`,
          }))}
        />
      )}
    </ConfirmDialog>
  );
}
