export * from './types.js';
export * from './crds.js';
export * from './json.js';
export * from './errors.js';
