import process from 'node:process';
import { CONTROL_PLANE_VARIABLES } from '@replix/control-plane/config';
import { decodeEnvironment } from '@replix/runtime';
import { type StaticDecode, Type } from 'typebox';

/**
 * The variables the `replix` command itself reads (docs/cli.md). Commands that run the
 * control plane in this process decode its variables as well (`controlPlaneConfigOrExit`).
 */
export const CLI_VARIABLES = Type.Object({
  REPLIX_DATA_DIR: CONTROL_PLANE_VARIABLES.properties.REPLIX_DATA_DIR,
  REPLIX_API_PORT: CONTROL_PLANE_VARIABLES.properties.REPLIX_API_PORT,
  REPLIX_API_URL: Type.Optional(
    Type.String({ description: 'the control plane the commands call' }),
  ),
  REPLIX_TOKEN: Type.Optional(Type.String({ description: 'a JWT or a management key' })),
  REPLIX_API_KEY: Type.Optional(Type.String({ description: '`replix query`: the instance key' })),
  REPLIX_SOURCE_PASSWORD: Type.Optional(
    Type.String({
      description: '`connections create`: the password',
    }),
  ),
  REPLIX_DEMO_PORT: Type.Integer({
    minimum: 0,
    maximum: 65535,
    default: 15432,
    problem: 'must be a port number',
    description: "`replix start`: the demo source's port",
  }),
});
export type CliVariables = StaticDecode<typeof CLI_VARIABLES>;

let decoded: CliVariables | undefined;

/** This process's `CLI_VARIABLES`, decoded from the environment on first use. */
export function cliEnvironment(): CliVariables {
  decoded ??= decodeEnvironment(CLI_VARIABLES, process.env);
  return decoded;
}
