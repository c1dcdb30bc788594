/**
 * Regenerates the typed control-plane client (`npm run generate:client`): writes the OpenAPI
 * document the control plane serves to packages/client/openapi.json, then has openapi-ts emit
 * types, SDK functions and its fetch client into packages/client/src/generated/ (the client
 * code is copied in, so the package has no runtime dependency).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '@hey-api/openapi-ts';
import { openApiJsonText, servedOpenApiDocument } from './openapi-document.ts';

const documentPath = fileURLToPath(new URL('../packages/client/openapi.json', import.meta.url));
const outputPath = fileURLToPath(new URL('../packages/client/src/generated', import.meta.url));

writeFileSync(documentPath, openApiJsonText(await servedOpenApiDocument()));
await createClient({
  input: documentPath,
  output: { path: outputPath, importFileExtension: '.ts', clean: true },
  plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
  logs: { level: 'warn' },
});
// The fetch client names the DOM's global BodyInit, which Node's types lack (they do have
// RequestInit, in both worlds): spell it through RequestInit so the repo typechecks without DOM.
const fetchClient = join(outputPath, 'client', 'client.gen.ts');
writeFileSync(
  fetchClient,
  readFileSync(fetchClient, 'utf8').replaceAll(
    'BodyInit | null | undefined',
    "RequestInit['body']",
  ),
);
process.stdout.write(`wrote ${documentPath} and ${outputPath}\n`);
