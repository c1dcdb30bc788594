// deploy/docker/Dockerfile cannot be built here (no container engine on these machines). What
// can be checked is: it copies paths that exist and that its ignore file keeps, its runtime
// stage takes only the packed CLI and installs it without dev dependencies or install scripts,
// and it runs as the user the manifests expect. That the packed CLI installs from the registry
// alone and runs (`replix start`, `serve`, `query`) is tools/pack-install.int.test.ts's.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { environmentReference } from '@replix/runtime';
import { describe, expect, it } from 'vitest';
import { CONTROL_PLANE_VARIABLES } from '../packages/control-plane/src/config.ts';
import { renderKustomization } from './render-kustomization.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const dockerfile = readFileSync(join(root, 'deploy/docker/Dockerfile'), 'utf8');
const ignored = readFileSync(join(root, 'deploy/docker/Dockerfile.dockerignore'), 'utf8')
  .split('\n')
  .filter((line) => line.trim() && !line.startsWith('#'));

/** Whether the build context leaves `path` out (the ignore file uses `name` and `**` + `/name`). */
function isIgnored(path: string): boolean {
  const segments = path.split('/');
  return ignored.some((pattern) =>
    pattern.startsWith('**/')
      ? segments.includes(pattern.slice(3))
      : segments[0] === pattern || path === pattern,
  );
}

/** The instructions of each stage, `FROM` first, continuation lines joined. */
function stages(): string[][] {
  const lines = dockerfile
    .replaceAll('\\\n', ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const result: string[][] = [];
  for (const line of lines) {
    if (line.startsWith('FROM ')) result.push([line]);
    else result.at(-1)?.push(line);
  }
  return result;
}

const runtime = stages().at(-1) as string[];
const packagesStage = stages().find((stage) => / AS packages$/.test(stage[0] as string)) ?? [];
/** The sources of the packing stage's `COPY` lines that read the build context. */
const copiedFromContext = packagesStage
  .filter((line) => line.startsWith('COPY ') && !line.includes('--from='))
  .flatMap((line) => line.split(/\s+/).slice(1, -1));

/** Every file of the repository the packing stage's COPY lines bring into the image. */
function contextFiles(): string[] {
  return execFileSync(
    'git',
    ['ls-files', '--cached', '--others', '--exclude-standard', ...copiedFromContext],
    { cwd: root, encoding: 'utf8' },
  )
    .split('\n')
    .filter((path) => path && !isIgnored(path) && existsSync(join(root, path)));
}

/** The runtime stage's RUN line that unpacks and installs the CLI package. */
function installLine(): string {
  const line = runtime.find((l) => l.startsWith('RUN ') && l.includes('npm install'));
  if (!line) throw new Error('the runtime stage installs no package');
  return line;
}

/** The flags of its `npm install`. */
function installFlags(): string[] {
  const command = /npm install((?:\s+--[\w=-]+)+)/.exec(installLine())?.[1] ?? '';
  return command.trim().split(/\s+/);
}

describe('deploy/docker/Dockerfile', () => {
  it('builds on Node.js 24 and copies only paths that exist', () => {
    const nodeImage = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1];
    expect(nodeImage).toMatch(/^node:24-/);
    for (const stage of stages()) expect(stage[0]).toMatch(/^FROM \$\{NODE_IMAGE\}/);
    const allCopied = stages()
      .flat()
      .filter((line) => line.startsWith('COPY ') && !line.includes('--from='))
      .flatMap((line) => line.split(/\s+/).slice(1, -1));
    expect(allCopied.length).toBeGreaterThan(0);
    for (const path of allCopied) {
      expect(existsSync(join(root, path)), path).toBe(true);
      expect(isIgnored(path), path).toBe(false);
    }
  });

  it('keeps every source, manifest and tool the packing needs in the build context', () => {
    const files = contextFiles();
    for (const needed of [
      'package.json',
      'package-lock.json',
      'packages/cli/bin/replix.js',
      'packages/cli/src/main.ts',
      'packages/control-plane/src/start-control-plane.ts',
      'packages/dashboard/index.html',
      'packages/instance/package.json',
      'packages/sdk/tsconfig.build.json',
      'tools/pack-packages.ts',
      'tools/ensure-dashboard.ts',
    ])
      expect(files, needed).toContain(needed);
    expect(files.filter((file) => /\/(test|node_modules|dist)\//.test(file))).toEqual([]);
    expect(
      packagesStage.some((line) => /node tools\/pack-packages\.ts --out \/packages/.test(line)),
    ).toBe(true);
  });

  it('builds the runtime stage from the packed CLI only: nothing of the build context', () => {
    const copies = runtime.filter((line) => line.startsWith('COPY '));
    expect(copies).toEqual(['COPY --from=packages /packages /tmp/packages']);
    expect(installLine()).toMatch(
      /^RUN tar -xzf \/tmp\/packages\/replix-cli-\*\.tgz --strip-components=1 -C \/app /,
    );
  });

  it('runs the CLI as user 10001, as the manifests run it', () => {
    expect(runtime).toContain('USER 10001:10001');
    // The Kubernetes driver starts instances with the same CLI (REPLIX_K8S_REPLIX_BIN).
    const replixBin = environmentReference(CONTROL_PLANE_VARIABLES).find(
      (variable) => variable.name === 'REPLIX_K8S_REPLIX_BIN',
    )?.default as string;
    expect(runtime).toContain(`ENTRYPOINT ["node", "${replixBin}"]`);
    expect(existsSync(join(root, replixBin.replace(/^\/app\//, '')))).toBe(true);
    expect(installFlags()).toEqual(expect.arrayContaining(['--omit=dev', '--ignore-scripts']));
    const deployments = renderKustomization(join(root, 'deploy/kubernetes')).filter(
      (object) => object.kind === 'Deployment',
    );
    for (const deployment of deployments) {
      const pod = (deployment.spec as { template: { spec: { securityContext: object } } }).template
        .spec;
      expect(pod.securityContext).toMatchObject({ runAsUser: 10001, runAsGroup: 10001 });
    }
  });
});
