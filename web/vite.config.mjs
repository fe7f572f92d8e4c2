import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The admin UI is built to web/dist and served by the API server at /ui (src/features/ui).
// Preact's JSX goes through esbuild directly: no Babel, no framework plugin.
export default defineConfig({
  root: path.dirname(fileURLToPath(import.meta.url)),
  base: '/ui/',
  logLevel: 'warn',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
  },
  server: { proxy: { '/v1': 'http://127.0.0.1:8080', '/ui/session': 'http://127.0.0.1:8080' } },
});
