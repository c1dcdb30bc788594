/** The files of a build artifact (docs/control-plane/builds.md, "Artifact layout"). */
export const ARTIFACT_FILES = {
  /** The instance program, bundled: `replix serve --artifact` imports it and calls runArtifact. */
  program: 'instance.mjs',
  /** The validated schema config with the database's sync settings merged in. */
  schemaConfig: 'schema-config.json',
  /** What introspection of the source found when the build ran. */
  sourceSchema: 'source-schema.json',
  /** The instance API's OpenAPI document over the compiled schema. */
  openapi: 'openapi.json',
  manifest: 'manifest.json',
} as const;

/** `manifest.json`: what the artifact is and the sha256 of every other file in it. */
export interface ArtifactManifest {
  readonly buildId: string;
  readonly databaseId: string;
  /** The first 12 hex digits of the sha256 of `instance.mjs`; `meta.version` ends with it. */
  readonly buildHash: string;
  /** The engine release the program was built from. */
  readonly release: string;
  readonly createdAt: string;
  readonly files: Readonly<Record<string, { readonly sha256: string; readonly bytes: number }>>;
}
