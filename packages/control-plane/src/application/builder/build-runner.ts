import type { BuildClaim } from '../../adapters/store/build-queue.ts';

/**
 * Where the builder role runs a build it claimed: in its own process (`localBuildRunner`), or
 * as a Kubernetes Job (`drivers/kubernetes/kubernetes-build-runner.ts`). Either way the build
 * itself runs through `runClaimedBuild`, which records the outcome; a runner returns when the
 * build is recorded, given back, or no longer this builder's to watch (`stopping` aborted).
 */
export interface BuildRunner {
  /** `progressed` is told each time the build's lease is renewed (the builder's probes). */
  run(claim: BuildClaim, stopping: AbortSignal, progressed?: () => void): Promise<void>;
}
