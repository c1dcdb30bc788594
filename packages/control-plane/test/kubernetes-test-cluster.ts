import { fileURLToPath } from 'node:url';

/** The `replix` command of this checkout: what the fake kubelet's pods run as the image's CLI. */
export const REPLIX_BIN = fileURLToPath(new URL('../../cli/bin/replix.js', import.meta.url));
