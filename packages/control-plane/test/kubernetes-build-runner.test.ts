import { describe, expect, it } from 'vitest';
import type { LiveObject } from '../src/adapters/drivers/kubernetes/kubernetes-api.ts';
import { jobEndReason } from '../src/adapters/drivers/kubernetes/kubernetes-build-runner.ts';

const job = (conditions: object[] | undefined): LiveObject => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'replix-build-x', namespace: 'replix-system', labels: {} },
  status: conditions ? { conditions } : {},
});

describe('jobEndReason', () => {
  it('is null while the Job runs', () => {
    expect(jobEndReason(job(undefined), 60)).toBeNull();
    expect(jobEndReason(job([{ type: 'Suspended', status: 'True' }]), 60)).toBeNull();
    expect(jobEndReason(job([{ type: 'Failed', status: 'False' }]), 60)).toBeNull();
  });

  it('says why a Job ended, in words for the build record', () => {
    expect(
      jobEndReason(job([{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded' }]), 1800),
    ).toBe("The build did not finish within 1800 s (the build job's deadline).");
    expect(
      jobEndReason(job([{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }]), 60),
    ).toBe('The build job failed (BackoffLimitExceeded) before it recorded an outcome.');
    expect(jobEndReason(job([{ type: 'Failed', status: 'True' }]), 60)).toBe(
      'The build job failed before it recorded an outcome.',
    );
    expect(jobEndReason(job([{ type: 'Complete', status: 'True' }]), 60)).toBe(
      'The build job ended without recording an outcome.',
    );
    expect(jobEndReason(null, 60)).toBe('The build job was deleted before it recorded an outcome.');
  });
});
