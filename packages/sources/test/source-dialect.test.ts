import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseSourceUrl } from '../src/parse-source-url.ts';
import {
  backendOfUrlScheme,
  SOURCE_BACKENDS,
  SOURCE_DIALECTS,
  sourceDialect,
  tlsUrlParams,
} from '../src/source-dialect.ts';

describe('SourceDialect', () => {
  it('imports nothing, so the dashboard can bundle it for the browser', () => {
    const text = readFileSync(new URL('../src/source-dialect.ts', import.meta.url), 'utf8');
    expect(text).not.toMatch(/^\s*import\b/m);
  });

  it('names each backend by its own key and reads its own URL schemes back', () => {
    for (const backend of SOURCE_BACKENDS) {
      const dialect = sourceDialect(backend);
      expect(dialect.backend).toBe(backend);
      for (const scheme of dialect.urlSchemes) expect(backendOfUrlScheme(scheme)).toBe(backend);
      const url = `${dialect.urlSchemes[0]}://u@db.example/app`;
      expect(parseSourceUrl(url)).toMatchObject({
        backend,
        options: { port: dialect.defaultPort },
      });
    }
    expect(backendOfUrlScheme('POSTGRESQL')).toBe('postgres');
    expect(backendOfUrlScheme('oracle')).toBeUndefined();
    expect(() => sourceDialect('oracle')).toThrow('Unknown source backend "oracle".');
  });

  it('writes TLS as sslmode, or as SQL Server’s encrypt and trustServerCertificate', () => {
    expect(tlsUrlParams(SOURCE_DIALECTS.postgres, 'verify-full')).toEqual({
      sslmode: 'verify-full',
    });
    expect(tlsUrlParams(SOURCE_DIALECTS.mssql, 'disable')).toEqual({
      encrypt: 'false',
      trustServerCertificate: 'true',
    });
    expect(tlsUrlParams(SOURCE_DIALECTS.mssql, 'verify-full')).toEqual({
      encrypt: 'true',
      trustServerCertificate: 'false',
    });
  });
});
