/**
 * The instance pod's init container program (run as `node --input-type=module -e`; Node
 * built-ins only, so the instance image needs nothing more): fetches `manifest.json` from the
 * control plane's artifact endpoint with the instance's bearer token, checks its sha256 against
 * the one the Deployment pins, then fetches every file it lists and checks each file's sha256
 * and size before writing it. Any mismatch or HTTP error exits 1 without starting the instance.
 * Redirects are refused, so the token never travels to another host; errors name the file,
 * never the token or the URL.
 */
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import process from 'node:process';

interface ManifestFile {
  readonly bytes: number;
  readonly sha256: string;
}

const {
  REPLIX_ARTIFACT_URL: base,
  REPLIX_ARTIFACT_SHA256: expected,
  REPLIX_ARTIFACT_TOKEN: token,
  REPLIX_ARTIFACT_DIR: dir,
} = process.env;

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

async function get(name: string): Promise<Buffer> {
  const response = await fetch(`${base}/${name}`, {
    headers: { authorization: `Bearer ${token}` },
    redirect: 'error',
  });
  if (!response.ok) throw new Error(`${name}: HTTP ${response.status}`);
  return Buffer.from(await response.arrayBuffer());
}

try {
  const manifestBytes = await get('manifest.json');
  if (sha256(manifestBytes) !== expected) throw new Error('manifest.json: sha256 mismatch');
  const files: Record<string, ManifestFile> =
    JSON.parse(manifestBytes.toString('utf8')).files ?? {};
  mkdirSync(`${dir}`, { recursive: true });
  for (const [name, file] of Object.entries(files)) {
    if (name === 'manifest.json') continue;
    if (!/^[a-z0-9][a-z0-9._-]*$/.test(name)) throw new Error('the manifest names an invalid file');
    const bytes = await get(name);
    if (bytes.length !== file.bytes || sha256(bytes) !== file.sha256) {
      throw new Error(`${name}: sha256 mismatch`);
    }
    writeFileSync(`${dir}/${name}`, bytes);
  }
  writeFileSync(`${dir}/manifest.json`, manifestBytes);
  console.log(`artifact fetched: ${Object.keys(files).length} files`);
} catch (error) {
  console.error(
    `artifact fetch failed: ${error instanceof Error ? error.message : 'unknown error'}`,
  );
  process.exit(1);
}
