import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Absolute path of the file `libs/api/<file>`: looked up in the nearest ancestor of this module's
 * directory that has it (the repo root, both from libs/api/src under ts-jest and from dist/libs/api/src
 * after tsc, and the image's /app).
 */
export function apiFile(...file: string[]): string {
  const start = dirname(fileURLToPath(import.meta.url));
  const relative = join('libs', 'api', ...file);
  for (let dir = start; ; dir = dirname(dir)) {
    const candidate = join(dir, relative);
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) break;
  }
  throw new Error(`${relative} not found in ${start} or any parent directory`);
}

/** Absolute path of Karmada's scheduler-estimator API as karmada-quota serves it (libs/api/proto). */
export const estimatorProtoFile = (): string => apiFile('proto', 'estimator.proto');
