export * from './types.js';
export * from './crds.js';
export * from './json.js';
