/** A TCP port number a listener or connection can use: 1 to 65535. */
export function isPort(port: unknown): port is number {
  return Number.isInteger(port) && (port as number) >= 1 && (port as number) <= 65_535;
}
