import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The dashboard is served by the control plane from dist/ (index.html for every page address,
// hashed files under /assets/). `npm run dev -w @replix/dashboard` proxies the API to a running
// control plane for development.
export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  // The app in one chunk (about 540 kB, 170 kB gzipped) and the playground's editor in another
  // (CodeMirror and the query parser, about 350 kB, 115 kB gzipped), fetched on the playground
  // only; each loaded once, then cached for good by its hash.
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true, chunkSizeWarningLimit: 1024 },
  server: {
    proxy: {
      '/v1': process.env.REPLIX_API_URL ?? 'http://127.0.0.1:4000',
      '/billing/': process.env.REPLIX_API_URL ?? 'http://127.0.0.1:4000',
    },
  },
});
