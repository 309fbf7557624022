/** A service's JSON log line (libs/service-kit's jsonLogger): what happened, and its facts as fields. */
export interface LogRecord {
  message: string;
  /** ms since the epoch */
  timestamp: number;
  [field: string]: unknown;
}

/** The JSON log lines of a service's output; other lines (a stack trace, say) are skipped. */
export function logRecords(output: string): LogRecord[] {
  return output.split('\n').flatMap((line) => {
    try {
      const record = JSON.parse(line) as Partial<LogRecord> | null;
      return typeof record?.message === 'string' ? [record as LogRecord] : [];
    } catch {
      return []; // not JSON
    }
  });
}
