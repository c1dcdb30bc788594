/** The non-root user and group of the Replix runtime image, which every pod Replix makes runs as. */
export const RUN_AS = 10_001;

/**
 * The pod security context of every pod Replix makes (instances, build Jobs, the unrouted
 * server): non-root as the image's user, the runtime's default seccomp profile. Pods that write
 * to a volume add `fsGroup: RUN_AS`.
 */
export const POD_SECURITY = {
  runAsNonRoot: true,
  runAsUser: RUN_AS,
  runAsGroup: RUN_AS,
  seccompProfile: { type: 'RuntimeDefault' },
} as const;

/** Every container's security context: no privilege, a read-only root, no capabilities. */
export const CONTAINER_SECURITY = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ['ALL'] },
} as const;
