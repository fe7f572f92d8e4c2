// The embedded buffer's writer thread (see thread-writer.ts). Worker threads do not inherit the
// tsx loader the main thread runs under, so this plain JavaScript entry registers it first.
import { register } from 'tsx/esm/api';

register();
await import('./writer-thread-main.ts');
