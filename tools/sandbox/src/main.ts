import { describeError } from '#api';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { down, sandboxPaths, supervise, up } from './sandbox.js';

const USAGE = `usage: npm run sandbox [-- up [--members N] [--no-karmada] [--containers] | down]
  (no command)   start the local federation, real Karmada and the services in the foreground;
                 Ctrl-C stops all
  up             the same, detached; returns when ready and writes .sandbox/env.json
  down           stop everything 'up' started and remove the state
  --no-karmada   leave Karmada out: ResourceBindings are written by hand and nothing acts on them
  --containers   the host API server listens on every address too, and
                 .sandbox/host/apiserver/kubeconfig-containers reaches it from containers
                 (docker-compose.yml)`;

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      members: { type: 'string', default: '2' },
      'no-karmada': { type: 'boolean', default: false },
      containers: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return void console.log(USAGE);
  const members = Number(values.members);
  if (!Number.isInteger(members) || members < 1 || members > 10) {
    throw new Error(`--members must be a whole number from 1 to 10, got "${values.members}"`);
  }
  const paths = sandboxPaths();
  const print = (s: string) => console.log(s);
  const karmada = !values['no-karmada'];
  const containers = values.containers;
  switch (positionals[0]) {
    case undefined:
    case 'run':
      return supervise({ members, karmada, containers, paths, print });
    case 'up':
      return up({ members, karmada, containers, paths, entry: fileURLToPath(import.meta.url), print });
    case 'down':
      return down({ paths, print });
    default:
      throw new Error(`unknown command "${positionals[0]}"\n${USAGE}`);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`sandbox: ${describeError(err)}`);
    process.exit(1);
  },
);
