// The image's entry point (Dockerfile): `node dist/apps/main.js <service>` runs that service's main
// module in this process, so the service itself is the container's PID 1 and gets its signals.
import { existsSync, readdirSync } from 'node:fs';

const appsDir = new URL('.', import.meta.url);
const mainOf = (service: string) => new URL(`${service}/src/main.js`, appsDir);
/** The services this image can run: every app directory with a compiled main. */
const services = readdirSync(appsDir, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(mainOf(entry.name)))
  .map((entry) => entry.name)
  .sort();

const service = process.argv[2] ?? '';
if (!services.includes(service)) {
  process.stderr.write(
    `unknown service ${JSON.stringify(service)}: the container's argument names the service to run, ` +
      `one of ${services.join(', ')} (e.g. docker run IMAGE aggregator)\n`,
  );
  process.exit(2);
}
await import(mainOf(service).href);
