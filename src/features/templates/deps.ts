import type { AppContext } from '../../context.js';

export type TemplatesDeps = Pick<AppContext, 'db' | 'seam' | 'clock'>;
