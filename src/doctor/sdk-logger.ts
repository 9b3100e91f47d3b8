/**
 * The Temporal SDK logger asyncjob installs (worker, demo): the SDK's `DefaultLogger` at the configured level,
 * without the warnings that asyncjob's layout makes expected, so they are not read as problems. One: each
 * provider's activity-only worker "registers no workflows" by design (the workflows run on the main task queue).
 */
import { DefaultLogger, type LogEntry, type LogLevel } from '@temporalio/worker';

/** SDK messages that are expected in asyncjob's layout, never a problem. */
export const EXPECTED_SDK_MESSAGES: readonly RegExp[] = [/^No workflows registered, not polling for workflow tasks$/];

/** A `DefaultLogger` at `level` that drops {@link EXPECTED_SDK_MESSAGES}; `write` defaults to the SDK's (stderr). */
export function quietSdkLogger(level: LogLevel, write?: (entry: LogEntry) => void): DefaultLogger {
  const plain = new DefaultLogger(level);
  const out =
    write ?? ((entry: LogEntry) => (plain as unknown as { logFunction: (e: LogEntry) => void }).logFunction(entry));
  return new DefaultLogger(level, (entry) => {
    if (EXPECTED_SDK_MESSAGES.some((pattern) => pattern.test(entry.message))) return;
    out(entry);
  });
}
