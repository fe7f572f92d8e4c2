// The embedded buffer's writer threads (buffer/thread-writer.ts) start here, in the composition
// root, so they run only the tasks it registers (writer-tasks.ts). Worker threads do not inherit
// the tsx loader the main thread runs under, so this plain JavaScript entry registers it first.
import { register } from 'tsx/esm/api';

register();
await import('./writer-thread-main.ts');
