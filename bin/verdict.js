#!/usr/bin/env node
// The CLI runs the TypeScript sources directly through tsx, so `npm start`, `npm run verdict`
// and the installed `verdict` binary always execute the code in the tree, with no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/main.ts');
await main(process.argv);
