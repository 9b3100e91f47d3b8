/**
 * The close's own activity: taking a delivered report back. Here it only says what it would do; a real close
 * deletes the file from the finance share, or marks it withdrawn.
 */

/** The activities the month-end close's worker serves. */
export function createMonthEndActivities(log: (line: string) => void) {
  return {
    /** Withdraws the report `operationId` delivered (provider job `jobId`); safe to repeat. Returns what it did. */
    async withdrawReport(operationId: string, jobId: string | null): Promise<string> {
      log(`withdrawn: the result of ${operationId} (provider job ${jobId ?? 'unknown'}) taken off the finance share`);
      return 'withdrawn';
    },
  };
}

/** The activities' types, for the workflow's `proxyActivities`. */
export type MonthEndActivities = ReturnType<typeof createMonthEndActivities>;
