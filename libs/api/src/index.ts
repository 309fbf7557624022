export * from './types.js';
export * from './crds.js';
