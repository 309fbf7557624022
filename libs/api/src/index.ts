export * from './types.js';
export { estimatorProtoFile } from './files.js';
export * from './json.js';
export * from './errors.js';
