export { findEnvironment } from './store.js';
