/** Periodic work registered with Nest's scheduler, stopped by its owner in its own shutdown hook. */
import type { SchedulerRegistry } from '@nestjs/schedule';

/**
 * Stops the named intervals: only those still registered (start-up may have failed before they were
 * added, or the scheduler cleared them already), so a shutdown hook never throws for them.
 */
export function stopIntervals(scheduler: SchedulerRegistry, ...names: readonly string[]): void {
  for (const name of names) if (scheduler.doesExist('interval', name)) scheduler.deleteInterval(name);
}
