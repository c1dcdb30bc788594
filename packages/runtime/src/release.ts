/** The Replix release every process reports (traces, `X-Service-Version`, `meta.version`). */
export const RELEASE = '0.1.0';
