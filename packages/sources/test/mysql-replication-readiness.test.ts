import { describe, expect, it } from 'vitest';
import {
  globalPrivileges,
  hasReloadPrivilege,
  hasReplicationPrivileges,
} from '../src/mysql/mysql-grants.ts';
import {
  type MySqlReplicationFacts,
  mySqlReplicationReadiness,
} from '../src/mysql/mysql-replication-readiness.ts';

const READY: MySqlReplicationFacts = {
  logBin: true,
  format: 'ROW',
  rowImage: 'FULL',
  serverId: 1,
  binlogChecksum: 'CRC32',
  replicationPrivileges: true,
  reloadPrivilege: null,
};

describe('mySqlReplicationReadiness', () => {
  it('is ready with the binlog on, ROW format, FULL images and the privileges', () => {
    expect(mySqlReplicationReadiness(READY)).toEqual({ ready: true, issues: [], facts: READY });
    // Servers without binlog_row_image always log full rows.
    expect(mySqlReplicationReadiness({ ...READY, rowImage: null }).ready).toBe(true);
    expect(mySqlReplicationReadiness({ ...READY, format: 'row', rowImage: 'full' }).ready).toBe(
      true,
    );
  });

  it('says what to change, one sentence per problem', () => {
    const readiness = mySqlReplicationReadiness({
      logBin: false,
      format: 'MIXED',
      rowImage: 'MINIMAL',
      serverId: 0,
      binlogChecksum: 'NONE',
      replicationPrivileges: false,
      reloadPrivilege: false,
    });
    expect(readiness.ready).toBe(false);
    expect(readiness.issues).toEqual([
      'Turn the binary log on: start the server with log_bin (it is OFF).',
      'Set binlog_format=ROW (it is MIXED).',
      'Set binlog_row_image=FULL (it is MINIMAL).',
      'Grant the user REPLICATION SLAVE and REPLICATION CLIENT (BINLOG MONITOR on MariaDB 10.5+) on *.*.',
      'Grant the user RELOAD on *.*: MySQL records a snapshot’s binlog position under FLUSH TABLES WITH READ LOCK.',
    ]);
    expect(readiness.facts).toMatchObject({ logBin: false, format: 'MIXED', serverId: 0 });
  });

  it('names each setting as it is', () => {
    expect(mySqlReplicationReadiness({ ...READY, format: 'STATEMENT' }).issues).toEqual([
      'Set binlog_format=ROW (it is STATEMENT).',
    ]);
    expect(mySqlReplicationReadiness({ ...READY, format: null }).issues).toEqual([
      'Set binlog_format=ROW (it is not set).',
    ]);
    expect(mySqlReplicationReadiness({ ...READY, rowImage: 'noblob' }).issues).toEqual([
      'Set binlog_row_image=FULL (it is NOBLOB).',
    ]);
  });
});

describe('replication privileges from SHOW GRANTS', () => {
  const privileges = (...lines: string[]) => globalPrivileges(lines);

  it('reads the global privileges of every line', () => {
    expect([
      ...privileges(
        "GRANT REPLICATION SLAVE, REPLICATION  CLIENT ON *.* TO `cdc`@`%` IDENTIFIED BY PASSWORD '*X'",
        'GRANT SELECT ON `shop`.* TO `cdc`@`%`',
        'GRANT `reader` TO `cdc`@`%`',
      ),
    ]).toEqual(['REPLICATION SLAVE', 'REPLICATION CLIENT']);
  });

  it('accepts the MariaDB, MySQL and all-privileges spellings', () => {
    for (const lines of [
      ['GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION'],
      ['GRANT BINLOG MONITOR, REPLICATION SLAVE ON *.* TO `cdc`@`%`'],
      ['GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO `cdc`@`%`'],
      ['GRANT RELOAD, SUPER, REPLICATION SLAVE ON *.* TO `cdc`@`%`'],
      ['grant replication replica, replication client on *.* to cdc@localhost'],
    ]) {
      expect(hasReplicationPrivileges(privileges(...lines)), lines[0]).toBe(true);
    }
  });

  it('wants both reading the binlog and reading its status, on *.*', () => {
    for (const lines of [
      ['GRANT USAGE ON *.* TO `cdc`@`%`'],
      ['GRANT REPLICATION SLAVE ON *.* TO `cdc`@`%`'],
      ['GRANT REPLICATION CLIENT, SUPER ON *.* TO `cdc`@`%`'],
      ['GRANT ALL PRIVILEGES ON `shop`.* TO `cdc`@`%`'],
    ]) {
      expect(hasReplicationPrivileges(privileges(...lines)), lines[0]).toBe(false);
    }
  });

  it('finds RELOAD for MySQL’s snapshot lock', () => {
    expect(hasReloadPrivilege(privileges('GRANT RELOAD ON *.* TO `cdc`@`%`'))).toBe(true);
    expect(hasReloadPrivilege(privileges('GRANT ALL PRIVILEGES ON *.* TO `cdc`@`%`'))).toBe(true);
    expect(hasReloadPrivilege(privileges('GRANT SELECT ON *.* TO `cdc`@`%`'))).toBe(false);
  });
});
