import { Buffer } from 'node:buffer';
import { createHash, randomUUID } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CompiledSchema, SchemaConfig, SourceSchema } from '@replix/engine';
import { generateOpenApi } from '@replix/instance';
import { ARTIFACT_FILES, type ArtifactManifest } from '@replix/instance-protocol';
import { RELEASE } from '@replix/runtime';
import { artifactDirFor, artifactsRootFor } from './artifact-paths.ts';

export interface ArtifactInput {
  readonly dataDir: string;
  readonly buildId: string;
  readonly databaseId: string;
  /** The bundled instance program (instanceBundle()). */
  readonly programPath: string;
  readonly schemaConfig: SchemaConfig;
  readonly sourceSchema: SourceSchema;
  readonly schema: CompiledSchema;
}

export interface WrittenArtifact {
  readonly dir: string;
  readonly manifest: ArtifactManifest;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * Writes a build's artifact (docs/control-plane/builds.md, "Artifact layout"): the program, the
 * schema config, the source schema, the OpenAPI document and the manifest, into a temporary
 * folder renamed into place at the end, so the artifact folder is complete or absent. A folder
 * left by an earlier attempt of the same build (one whose builder was lost) is replaced: no
 * instance runs from a build that did not succeed.
 */
export function writeArtifact(input: ArtifactInput): WrittenArtifact {
  const root = artifactsRootFor(input.dataDir);
  const temporary = join(root, `.tmp-${input.buildId}-${randomUUID().slice(0, 8)}`);
  const dir = artifactDirFor(input.dataDir, input.buildId);
  mkdirSync(temporary, { recursive: true });
  try {
    copyFileSync(input.programPath, join(temporary, ARTIFACT_FILES.program));
    const program = readFileSync(join(temporary, ARTIFACT_FILES.program));
    const buildHash = sha256(program).slice(0, 12);
    const files: Record<string, { sha256: string; bytes: number }> = {
      [ARTIFACT_FILES.program]: { sha256: sha256(program), bytes: program.length },
    };
    const writeJson = (name: string, value: unknown) => {
      const bytes = Buffer.from(`${JSON.stringify(value, null, 2)}\n`);
      writeFileSync(join(temporary, name), bytes);
      files[name] = { sha256: sha256(bytes), bytes: bytes.length };
    };
    writeJson(ARTIFACT_FILES.schemaConfig, input.schemaConfig);
    writeJson(ARTIFACT_FILES.sourceSchema, input.sourceSchema);
    writeJson(
      ARTIFACT_FILES.openapi,
      generateOpenApi(input.schema, { version: `${RELEASE}-${buildHash}` }),
    );
    const manifest: ArtifactManifest = {
      buildId: input.buildId,
      databaseId: input.databaseId,
      buildHash,
      release: RELEASE,
      createdAt: new Date().toISOString(),
      files,
    };
    writeFileSync(
      join(temporary, ARTIFACT_FILES.manifest),
      `${JSON.stringify(manifest, null, 2)}\n`,
    );
    rmSync(dir, { recursive: true, force: true });
    renameSync(temporary, dir);
    return { dir, manifest };
  } finally {
    rmSync(temporary, { recursive: true, force: true });
  }
}
