import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, found from this file both as TypeScript source and as compiled dist/. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === 'karmada-quota')
      return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the karmada-quota repository root');
    dir = parent;
  }
}
