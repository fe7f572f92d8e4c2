// What other slices may know of templates: the renders slice pins and reads template versions.
export type { TemplateRow, VersionRow } from './store.js';
export { findVersion, seqOf } from './store.js';
export { requireTemplateWithVersions } from './service.js';
