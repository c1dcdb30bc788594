import {
  deleteV1DatabasesById,
  postV1DatabasesByIdCancelGoal,
  postV1DatabasesByIdPause,
  postV1DatabasesByIdPauseReplication,
  postV1DatabasesByIdProvision,
  postV1DatabasesByIdRebuild,
  postV1DatabasesByIdReconfigure,
  postV1DatabasesByIdRedeploy,
  postV1DatabasesByIdReload,
  postV1DatabasesByIdResize,
  postV1DatabasesByIdResume,
  postV1DatabasesByIdResumeReplication,
  postV1DatabasesByIdTerminate,
} from '@replix/client';
import { api, unwrap } from '../api.ts';
import type { ActionName, InstanceSize } from './instance-queries.ts';

/** One action as the user asked for it: resize and redeploy carry their choice. */
export type ActionRequest =
  | { action: Exclude<ActionName, 'resize' | 'redeploy'> }
  | { action: 'resize'; instanceSize?: InstanceSize | undefined; replicas?: number | undefined }
  | { action: 'redeploy'; buildId: string };

/** Button text and the sentence said once the API accepted the action. */
export const ACTION_TEXT: Record<ActionName, { label: string; accepted: string }> = {
  provision: { label: 'Provision', accepted: 'Provision queued: the database is building.' },
  rebuild: { label: 'Rebuild', accepted: 'Rebuild queued: the database is building.' },
  reconfigure: {
    label: 'Reconfigure',
    accepted: 'Reconfigure queued: the instance restarts with the current settings.',
  },
  redeploy: { label: 'Redeploy…', accepted: 'Redeploy queued: the chosen build is deploying.' },
  resize: {
    label: 'Resize…',
    accepted: 'Resize queued: a new instance starts at the new size and replicas, then takes over.',
  },
  pause: { label: 'Pause', accepted: 'Pause queued: the instance is stopping.' },
  resume: { label: 'Resume', accepted: 'Resume queued: the instance is starting.' },
  terminate: { label: 'Terminate', accepted: 'Terminate queued: the instance is being removed.' },
  delete: { label: 'Delete', accepted: 'The database is being deleted.' },
  reload: { label: 'Reload snapshot', accepted: 'Reload started: the snapshot is being reloaded.' },
  'pause-replication': { label: 'Pause replication', accepted: 'Replication paused.' },
  'resume-replication': { label: 'Resume replication', accepted: 'Replication resumed.' },
  'cancel-goal': { label: 'Cancel queued action', accepted: 'The queued action was cancelled.' },
};

/** Sends one action to the API; throws the API's error (a 409 carries the refusal's reason). */
export async function runAction(id: string, request: ActionRequest): Promise<void> {
  const options = { client: api, path: { id } };
  switch (request.action) {
    case 'provision':
      await unwrap(postV1DatabasesByIdProvision(options));
      return;
    case 'rebuild':
      await unwrap(postV1DatabasesByIdRebuild(options));
      return;
    case 'reconfigure':
      await unwrap(postV1DatabasesByIdReconfigure(options));
      return;
    case 'redeploy':
      await unwrap(postV1DatabasesByIdRedeploy({ ...options, body: { buildId: request.buildId } }));
      return;
    case 'resize':
      await unwrap(
        postV1DatabasesByIdResize({
          ...options,
          body: { instanceSize: request.instanceSize, replicas: request.replicas },
        }),
      );
      return;
    case 'pause':
      await unwrap(postV1DatabasesByIdPause(options));
      return;
    case 'resume':
      await unwrap(postV1DatabasesByIdResume(options));
      return;
    case 'terminate':
      await unwrap(postV1DatabasesByIdTerminate(options));
      return;
    case 'delete':
      await unwrap(deleteV1DatabasesById(options));
      return;
    case 'reload':
      await unwrap(postV1DatabasesByIdReload(options));
      return;
    case 'pause-replication':
      await unwrap(postV1DatabasesByIdPauseReplication(options));
      return;
    case 'resume-replication':
      await unwrap(postV1DatabasesByIdResumeReplication(options));
      return;
    case 'cancel-goal':
      await unwrap(postV1DatabasesByIdCancelGoal(options));
      return;
  }
}
