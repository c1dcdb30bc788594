/**
 * The global privileges (`ON *.*`) named by `SHOW GRANTS` lines, upper-cased, e.g.
 * `REPLICATION SLAVE`; `ALL PRIVILEGES` stays as written. Privileges that come through a role
 * are not listed by a plain `SHOW GRANTS` and so are not seen.
 */
export function globalPrivileges(grantLines: readonly string[]): Set<string> {
  const privileges = new Set<string>();
  for (const line of grantLines) {
    const match = /^GRANT\s+(.+?)\s+ON\s+\*\.\*\s+TO\s/i.exec(line.trim());
    if (!match) continue;
    for (const privilege of match[1]!.split(',')) {
      privileges.add(privilege.trim().replace(/\s+/g, ' ').toUpperCase());
    }
  }
  return privileges;
}

function hasAny(privileges: ReadonlySet<string>, names: readonly string[]): boolean {
  return privileges.has('ALL PRIVILEGES') || names.some((name) => privileges.has(name));
}

/**
 * Reading the binlog needs REPLICATION SLAVE (MySQL 8.0.22+ also spells it REPLICATION
 * REPLICA); reading binlog status needs REPLICATION CLIENT (MariaDB 10.5+: BINLOG MONITOR) or
 * SUPER.
 */
export function hasReplicationPrivileges(privileges: ReadonlySet<string>): boolean {
  return (
    hasAny(privileges, ['REPLICATION SLAVE', 'REPLICATION REPLICA']) &&
    hasAny(privileges, ['REPLICATION CLIENT', 'BINLOG MONITOR', 'SUPER'])
  );
}

/** MySQL's snapshot position is read under FLUSH TABLES WITH READ LOCK, which needs RELOAD. */
export function hasReloadPrivilege(privileges: ReadonlySet<string>): boolean {
  return hasAny(privileges, ['RELOAD']);
}
